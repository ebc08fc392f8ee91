# Non-secret dotfiles in the home directory (created by the test): ~/.gitconfig, ~/.config.
git config --global wl.marker | grep -qx home-gitconfig && grep -qx wl-setting "$HOME/.config/wl/settings" \
  && grep -q wl-bashrc "$HOME/.bashrc" && echo "OK home-dotfiles"
