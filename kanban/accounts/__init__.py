"""People and their credentials: creating users (``users``) and API tokens (``tokens``:
create, authenticate, revoke)."""
