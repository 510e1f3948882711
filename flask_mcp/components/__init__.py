"""Tools, resources, resource templates and prompts: the model, how decorator options
build them, the registry that lists them, and argument binding.
"""
