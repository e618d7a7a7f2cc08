"""Background jobs: work that must not hold a request (a Trello import), run by django-tasks'
database worker, with the progress and outcome their owner sees."""
