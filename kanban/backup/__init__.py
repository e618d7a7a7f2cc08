"""A deployment's backup: one archive of everything it holds (``manage.py backup``) and its
restore into an empty database of either vendor (``manage.py restore``).

``models`` turns the Django models' rows into archive parts and back; ``archive`` writes,
checks, restores and verifies the archive. The storage engine's data travels as a
``storage.dump`` file inside the archive.
"""
