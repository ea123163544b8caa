# `git stella <TAB>`: hand over to the completion of git-stella (fish 3.6 and older register
# git-* programs under their full name, which never matches `git stella`).
complete -c git -f -n '__fish_git_using_command stella' -a '(__fish_git_complete_custom_command stella)'
