"""The HTTP side of the site: the HTML pages (``views``), where plugin pages may run and the
CSP every page gets (``security``), and the request body bound in front of Django
(``bodylimit``)."""
