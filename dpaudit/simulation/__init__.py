"""Running kernels: the kernel contract, batch loop, views, seeding and ``dpaudit bench``.

Running kernels: the kernel contract, batch loop, transcript views and seeding
(:mod:`.simulate`), and ``dpaudit bench`` (:mod:`.bench`).
"""
