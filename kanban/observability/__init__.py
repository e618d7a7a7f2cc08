"""What an operator sees of a worker: Prometheus metrics (``metrics``) and structured logs
(``logs``). Nothing here decides anything; the parts that act record what they did."""
