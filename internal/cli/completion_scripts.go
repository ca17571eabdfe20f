package cli

// completionScripts are the scripts `acc completion SHELL` prints. Each
// asks acc for the candidates at every Tab, as complete describes
// (ACC_COMPLETE_CURRENT=1 acc WORD… CURRENT --generate-shell-completion),
// and acts on its answer: candidates with descriptions; :files, the
// shell's own file and directory names (--cwd, --workspace, --home,
// --client); :resources, file: followed by such a name (--resource,
// --released, --hint); nothing, no candidate at all — never the file
// names a shell falls back to, which a flag taking a word or a text would
// refuse. docs/cli.md (acc completion) says how to load them.
var completionScripts = map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}

// bashCompletion works with or without the bash-completion package: it
// reads the words from COMP_LINE itself, split at blanks only, so that
// file:src and --flag=value stay whole (bash's COMP_WORDS splits them at
// COMP_WORDBREAKS), and it trims each candidate to the part bash replaces,
// after the last : or = of the word. It keeps to bash 3 (macOS).
const bashCompletion = `# acc completion for bash (acc completion --help): at each Tab acc itself
# names the candidates. Works with or without the bash-completion package.

__acc_complete() {
  local line=${COMP_LINE:0:COMP_POINT} cur= prog out l
  local -a words=() cands=() descs=()
  read -r -a words <<< "$line"
  if [[ ${#words[@]} -gt 0 && $line != *[[:space:]] ]]; then
    cur=${words[${#words[@]}-1]}
    unset "words[${#words[@]}-1]"
  fi
  [[ ${#words[@]} -gt 0 ]] || return 0
  prog=${words[0]/#\~/$HOME}
  out=$(ACC_COMPLETE_CURRENT=1 "$prog" "${words[@]:1}" "$cur" --generate-shell-completion 2>/dev/null)
  COMPREPLY=()
  case $out in
  :files)
    compopt -o filenames 2>/dev/null
    while IFS= read -r l; do cands+=("$l"); done < <(compgen -f -- "$cur")
    ;;
  :resources)
    if [[ $cur == file:* ]]; then
      while IFS= read -r l; do
        [[ -d $l ]] && l+=/
        cands+=("file:$l")
      done < <(compgen -f -- "${cur#file:}")
    elif [[ file: == "$cur"* ]]; then
      cands=(file:)
    fi
    compopt -o nospace 2>/dev/null
    ;;
  *)
    while IFS= read -r l; do
      [[ -n $l && ${l%%:*} == "$cur"* ]] || continue
      cands+=("${l%%:*}")
      if [[ $l == *:* ]]; then descs+=("${l#*:}"); else descs+=(""); fi
    done <<< "$out"
    ;;
  esac
  # Bash replaces the text after the last : or = of the word (COMP_WORDBREAKS).
  local keep=$cur i
  [[ $COMP_WORDBREAKS == *:* ]] && keep=${keep##*:}
  [[ $COMP_WORDBREAKS == *=* ]] && keep=${keep##*=}
  local cut=$(( ${#cur} - ${#keep} ))
  if [[ ${COMP_TYPE:-} == 63 && ${#descs[@]} -gt 1 ]]; then
    # Listing the alternatives (a second Tab): each with its description.
    local width=0
    for l in "${cands[@]}"; do (( ${#l} > width )) && width=${#l}; done
    for i in "${!cands[@]}"; do
      if [[ -n ${descs[i]} ]]; then
        COMPREPLY+=("$(printf '%-*s  -- %s' "$width" "${cands[i]}" "${descs[i]}")")
      else
        COMPREPLY+=("${cands[i]}")
      fi
    done
    return 0
  fi
  for l in "${cands[@]}"; do COMPREPLY+=("${l:cut}"); done
  return 0
}

complete -F __acc_complete acc
`

// zshCompletion loads after compinit (source <(acc completion zsh)), or as
// the function _acc from fpath.
const zshCompletion = `#compdef acc
# acc completion for zsh (acc completion --help): at each Tab acc itself
# names the candidates.

_acc() {
  local cur=${words[CURRENT]}
  local -a before opts
  before=("${(@)words[1,CURRENT-1]}")
  opts=("${(@f)$(ACC_COMPLETE_CURRENT=1 ${~before[1]} "${(@Q)before[2,-1]}" "${(Q)cur}" --generate-shell-completion 2>/dev/null)}")
  case ${opts[1]} in
  :files) _files ;;
  :resources)
    if compset -P 'file:'; then
      _files
    else
      compadd -S '' -- file:
    fi
    ;;
  '') return 1 ;;
  *) _describe 'acc' opts ;;
  esac
}

if [ "$funcstack[1]" = "_acc" ]; then
  _acc "$@"
else
  compdef _acc acc
fi
`

// fishCompletion turns fish's own file names off for acc (complete -f) and
// offers them itself where acc names a path.
const fishCompletion = `# acc completion for fish (acc completion --help): at each Tab acc itself
# names the candidates.

function __acc_complete
    set -l before (commandline -opc)
    set -l cur (commandline -ct)
    set -lx ACC_COMPLETE_CURRENT 1
    set -l out ($before "$cur" --generate-shell-completion 2>/dev/null)
    switch "$out[1]"
        case :files
            __fish_complete_path "$cur"
        case :resources
            if string match -q -- 'file:*' "$cur"
                for p in (__fish_complete_path (string sub -s 6 -- "$cur"))
                    echo "file:$p"
                end
            else if string match -q -- "$cur*" file:
                echo file:
            end
        case '*'
            for line in $out
                set -l parts (string split -m 1 ":" -- "$line")
                if test (count $parts) -eq 2
                    printf "%s\t%s\n" $parts[1] $parts[2]
                else if test -n "$line"
                    printf "%s\n" $line
                end
            end
    end
end

complete -c acc -e
complete -c acc -f -a '(__acc_complete)'
`
