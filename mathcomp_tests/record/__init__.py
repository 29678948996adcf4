"""One night's folder (`mathcomp record`), as `mathcomp history`, `mathcomp site` and `mathcomp keep` read it.

``night`` says what a night's folder holds (its summary and pages, packed or plain), stages its files and
settles the folder beside the others without replacing one; ``packed`` keeps a page gzipped (and makes the
page that unpacks itself in the browser, for the site); ``plain_files`` reads and copies a night's files,
or a run folder's, never through a link. The command itself is cli/record.py.
"""
