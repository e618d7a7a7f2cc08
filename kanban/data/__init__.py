"""What people keep in projects, behind the access decision: KV values (``kv``), Knowledge
documents (``knowledge``), each user's named configurations of a board (``configurations``),
and the development demo data set (``demo``)."""
