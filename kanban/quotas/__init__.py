"""What one person may take, in one room: every rate limit and cap of the deployment.

- ``worker``: this worker process's share per person (open sockets, one message bucket);
- ``deployment``: the same limits and searches and write bytes across every worker, in
  Redis when there is one;
- ``rest``: the REST API's per-person request rate (DRF's throttle, counted in the cache);
- ``sign_in``: failed sign-ins, password resets and invite sign-ups, per name and per
  address (``client_address`` says whose address a request is).
"""
