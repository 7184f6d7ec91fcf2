"""Hardware profiles: one TOML file per chip in this folder, each number with its source in a comment.

``profile`` loads a file into frozen dataclasses (:class:`~engine.profiles.profile.Profile`); ``sources``
reads where each number comes from.
"""
