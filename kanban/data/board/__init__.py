"""The built-in Board's cards as agents change them (MCP ``board_cards``): the Board
plugin's key layout (``layout``), its ranks (``ranks``) and the actions that keep the
layout whole under concurrent writers (``cards``); and its comments as the server vouches
for them, whoever writes (``comments``)."""
