"""Cross-request state kept in flask-caching: sessions, event logs, mailboxes,
subscriptions, the shared registry, and what a store outage means.
"""
