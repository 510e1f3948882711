"""From what a handler returned to MCP result objects: content classes, conversion,
text encodings (JSON, TOON), status-form results and spilled oversized results.
"""
