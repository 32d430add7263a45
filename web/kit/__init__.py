"""What the table's app and the hub's app share: PIN access and sessions (``auth``,
``pin_access``), serving with waitress (``serve``), Server-Sent Event streams
(``events``), request bodies (``body``), security headers and error pages
(``hooks``), and how a game record is shown (``present``). It imports neither app.
"""
