-- luacheck configuration for the Neovim plugin (Debian: apt-get install lua-check).
std = 'luajit'
globals = { 'vim' }
max_line_length = 120
exclude_files = {}
