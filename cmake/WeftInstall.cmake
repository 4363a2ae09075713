# install rules (filled in)
