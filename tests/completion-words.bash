# Completes one command line the way bash would, with completion/gpusim:
#     bash completion-words.bash COMPLETION GPUSIM 'run --set policy.oom=re'
# prints the candidates, one a line. The line is broken into words as bash
# breaks it by default (at spaces and at "="), and the completion runs
# with bash-completion's helpers, which must be installed.
source /usr/share/bash-completion/bash_completion
source "$1"
gp=$2
COMP_LINE="$gp $3"
COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<< "$(printf '%s' "$COMP_LINE" | sed 's/=/ = /g')"
[[ $COMP_LINE == *' ' || $COMP_LINE == *'=' ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
_gpusim 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"
