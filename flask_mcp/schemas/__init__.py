"""marshmallow schemas, Python type hints and JSON Schema: conversion and validation.

The lowest layer: it knows marshmallow, apispec's converter and jsonschema, and
nothing of MCP messages.
"""
