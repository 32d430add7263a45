"""The organiser's side of a venue: the broker's locked-down configuration
(``gg-arbiter broker-config``) and the per-table venue files a table joins with
(``gg-arbiter join``). Not the table's link to the broker (that is :mod:`arbiter.fleet`).
"""
