"""Transports adapt a way of exchanging messages to the protocol core."""
