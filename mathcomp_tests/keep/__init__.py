"""Night records kept on a branch of the user's own repository (`mathcomp keep`), where nothing evicts them.

The branch (``mathcomp-history`` by default) holds one folder per night, ``<run-id>/``, with the record's
``summary.json`` and, when the night had them, ``report.html`` and ``diff.html``; each night that adds or
prunes records is one commit. Records are never rewritten: a record already on the branch stays as it is.

How the remote is reached: every git command runs in a temporary bare repository of our own, never in
the user's checkout (its work tree, index, refs and remote-tracking branches are left untouched). REMOTE
is a URL, a path to a repository, or the name of a remote of the repository in the current directory; a
name is resolved to its URL with ``git remote get-url``, and that repository's ``http.<url>.extraheader``
settings (where actions/checkout leaves the job's token) are copied into the temporary repository's own
config, so that fetch and push are authenticated as the checkout is. That is simpler than a clone of the
current repository, whose pushes would go to the checkout rather than to its remote, and it fetches only
the branch's tip (``--depth=1``), not the repository's history.

Modules: ``git`` (one git call: its timeout, no prompt, what it said with every credential taken out),
``remote`` (what REMOTE names), ``nights`` (the nights given and how old a night is), ``tree``
(the branch's next tree: what is added and what pruned; what on the branch is not a record), ``push``
(fetch, commit, push; again when another job pushed first), ``export`` (the branch's records written out as
a folder).
"""
