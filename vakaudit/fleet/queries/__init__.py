"""Fleet SQL over a lake (one ``.sql`` per figure; run by :mod:`vakaudit.fleet.analysis`)."""
