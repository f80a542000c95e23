-- Defines :Reprise; everything else loads on first use.
if vim.g.loaded_reprise then
  return
end
vim.g.loaded_reprise = true

vim.api.nvim_create_user_command('Reprise', function(opts)
  require('reprise').command(opts.args)
end, {
  nargs = '*',
  desc = 'Reprise coding agent',
  complete = function(arglead, cmdline)
    return require('reprise.commands').complete(arglead, cmdline)
  end,
})
