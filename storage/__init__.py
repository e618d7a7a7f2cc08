"""The data layer: typed addresses, values and lists with one global write sequence.

It is addressed by project id and namespace and knows nothing of users, roles or
transports; it never imports ``kanban``.
"""
