"""Between a live stack and the database: building one from its rows (:mod:`.loader`),
writing its transitions (:mod:`.recorder`), and the parsed-template cache."""
