"""Outgoing webhooks: a board's owner names a URL and the events it hears; each event is
signed (``signing``), posted by the background worker (``delivery``) to an address the
operator allows (``addresses``), retried with growing gaps, and logged. The events are
derived from committed changes in one place (``events``)."""
