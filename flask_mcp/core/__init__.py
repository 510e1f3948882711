"""The protocol core: one JSON-RPC message in, at most one response out.

No I/O, no Flask, no Werkzeug, no flask-caching (see ``README.md`` here).
"""
