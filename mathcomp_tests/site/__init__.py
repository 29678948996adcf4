"""The nightly site: a static folder of pages built from a folder of night records (`mathcomp site`), and
the record of one night (`mathcomp record --from`).

`nights` reads the records (each checked as history reads it) and ranks each night's verdict;
`index_page` draws the index (the newest night per model first, then every night); `night_record` stages a
record folder and settles it beside the others without replacing one; `folder_swap` puts a new folder where
an old one was in one step; `plain_files` copies a record's files, never through a link; `build` makes the
whole site in a folder of its own (marked by .mathcomp-site). docs/site.md describes what it holds.
"""
