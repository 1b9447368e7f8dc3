"""toolhistory's Python client: publish an agent's tool events, and replay them into its next turn."""

__version__ = "0.1.0"
