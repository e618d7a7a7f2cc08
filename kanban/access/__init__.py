"""Who may touch which project's data: the one access decision (``decision``) and what it
reads: memberships (``memberships``), the declarations projects make about each other and
their grants (``relationships``), and the access-changed events their changes send
(``events``)."""
