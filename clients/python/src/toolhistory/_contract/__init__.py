"""A copy of libs/contract/schema, made by clients/python/scripts/generate.py; do not edit."""
