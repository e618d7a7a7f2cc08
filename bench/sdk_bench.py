"""B8: placeholder until written."""
