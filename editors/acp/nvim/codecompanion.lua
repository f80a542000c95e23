-- Reprise as a CodeCompanion ACP adapter: the Gemini CLI adapter's handlers, Reprise's command.
-- "GEMINI_API_KEY" as a value means: read it from Neovim's environment (CodeCompanion's rule).
require("codecompanion").setup({
  adapters = {
    acp = {
      reprise = function()
        return require("codecompanion.adapters").extend("gemini_cli", {
          name = "reprise",
          formatted_name = "Reprise",
          commands = {
            default = { "reprise", "acp" },
          },
          defaults = {
            auth_method = "gemini-api-key",
          },
          env = {
            GEMINI_API_KEY = "GEMINI_API_KEY",
          },
        })
      end,
    },
  },
  interactions = {
    chat = { adapter = "reprise" },
  },
})
