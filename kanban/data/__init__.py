"""What people keep in projects, behind the access decision: KV values (``kv``), Knowledge
documents (``knowledge``), each user's named configurations of a board (``configurations``),
the development demo data set (``demo``), and the largest request that carries them
(``limits``)."""
