"""The wire: JSON-RPC envelopes, protocol revisions, request params and client input.

Everything here reads or writes messages; nothing runs a handler.
"""
