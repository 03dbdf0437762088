"""`pipelines view`: a local, read-only web app over a lake's catalog.

Pages (server-rendered, no scripts): datasets with their versions and runs, a filtered and paged episode
list, one episode step by step (screenshot with the action drawn on it, observation text, action, reasoning,
simulated branches beside the real next state, export rows), the quarantine, dedup clusters, and small SVG
charts.

How it stays safe on untrusted traces: every value goes through Jinja's autoescape and pages carry a
Content-Security-Policy without script sources; blobs are served only by a validated content hash looked up in
the `blobs` view (never a path from the request); the catalog is opened read-only for one request at a time
(a read-only connection held open would keep `pipelines run` from writing); the server binds loopback
unless told otherwise and answers only to loopback host names there.

    app.py      routes and responses          queries.py  one function per page's SQL, all paged
    db.py       per-request catalog access    files.py    blob and GX report reads from the lake
    marks.py    action -> marks on a screen   charts.py   bar and histogram geometry for SVG
"""
