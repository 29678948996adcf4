"""The history page (`mathcomp history`): the runs of a reports folder, or the nights of a folder of kept
nights, as a regression view across time.

``build`` reads the run folders (oldest first) and makes the page; ``fields`` checks that a night's
summary.json has the types history reads (``load_night``, also for the site, keep and record); ``page``
draws the rows, the tables and the plots; ``groups`` says where each run belongs (its model by identity,
its role, its axis); ``time_axis`` places each run by when it ran; ``figures`` draws the picture
(matplotlib); ``links`` links a run's id and points to its night's page. It imports the run page's shared
pieces (report/: sections, charts, the page around a body), never the other way round.
"""
