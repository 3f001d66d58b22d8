"""One SQL file per metric (see vakaudit.analyze.metrics); a package so the .sql files ship with it."""
