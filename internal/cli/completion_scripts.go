package cli

// completionScripts are the scripts `acc completion SHELL` prints. Each
// asks acc for the candidates at every Tab, as complete describes
// (ACC_COMPLETE_CURRENT=1 acc WORD… CURRENT --generate-shell-completion),
// and acts on its answer: candidates with descriptions; :files, file and
// directory names (--workspace, --client); :dirs, directory names only
// (--cwd, --home); :resources, file: followed by a file or directory name
// (--resource, --released, --hint); nothing, no candidate at all — never
// the file names a shell falls back to, which a flag taking a word or a
// text would refuse. A path goes after any --name= of the word, which
// stays. docs/cli.md (acc completion) says how to load them.
var completionScripts = map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}

// bashCompletion works with or without the bash-completion package. It
// reads the words from COMP_LINE itself, as bash will read them (quotes
// and backslashes removed), so that file:src and --flag=value stay whole
// (bash's COMP_WORDS splits them at COMP_WORDBREAKS), and the script runs
// or expands nothing typed (compgen's own tilde expansion, and readline's
// with shopt -s direxpand, are bash's). It quotes each candidate for where
// it goes — a ! inside double quotes too, which history expansion reads —
// and trims it to the part readline replaces: after an open quote, else
// after the last : = or other COMP_WORDBREAKS character outside quotes. A
// ~ stays unquoted only where it was typed unquoted, and file: is never
// followed by a ~ path (acc reads none there). It keeps
// to bash 3.2 (macOS): no compopt (there it registers -o nospace and adds
// the space itself), no associative arrays, case changes or mapfile.
const bashCompletion = `# acc completion for bash (acc completion --help): at each Tab acc itself
# names the candidates. Works with or without the bash-completion package,
# and in bash 3.2 (load it there with: eval "$(acc completion bash)").

# __acc_split LINE reads LINE as bash will, without running or expanding
# anything: __acc_words are its words with quotes and backslashes removed,
# but for the last one when LINE does not end in a blank: that is
# __acc_cur, the word being completed. __acc_open is the quote left open in
# it, if any, and __acc_keep the length of __acc_cur before the text
# readline replaces: the open quote, else the last COMP_WORDBREAKS
# character (such as : or =) outside quotes. __acc_tilde is 1 when the
# word starts with a ~ typed unquoted (a home directory, not a name).
__acc_split() {
  local line=$1 c w= inword= q= i=0 brk=0 qkeep=0 tl=
  __acc_words=()
  while [[ $i -lt ${#line} ]]; do
    c=${line:i:1}
    i=$((i + 1))
    if [[ $q == "'" ]]; then
      if [[ $c == "'" ]]; then q=; else w=$w$c; fi
    elif [[ -n $q ]]; then
      if [[ $c == '"' ]]; then
        q=
      elif [[ $c == '\' && $i -lt ${#line} && '$` + "`" + `"\' == *"${line:i:1}"* ]]; then
        w=$w${line:i:1}
        i=$((i + 1))
      else
        w=$w$c
      fi
    else
      case $c in
      ' ' | $'\t' | $'\n')
        [[ -n $inword ]] && __acc_words+=("$w")
        w= inword= brk=0 tl=
        continue
        ;;
      \\)
        if [[ $i -lt ${#line} ]]; then
          w=$w${line:i:1}
          i=$((i + 1))
        fi
        ;;
      \' | \")
        q=$c qkeep=${#w}
        ;;
      *)
        [[ -z $inword && $c == '~' ]] && tl=1
        w=$w$c
        [[ $COMP_WORDBREAKS == *"$c"* ]] && brk=${#w}
        ;;
      esac
      inword=1
    fi
  done
  __acc_cur=$w __acc_open=$q __acc_keep=$brk __acc_tilde=$tl
  [[ -n $q ]] && __acc_keep=$qkeep
  return 0
}

# __acc_quote TEXT OPEN TILDE sets __acc_q to TEXT quoted for the line:
# inside the quote OPEN (' or "), else with backslashes (printf %q), but
# for a leading ~ or ~user when TILDE is 1, which stays a home directory.
# Inside double quotes history expansion still reads ! (histchars), so it
# goes in as "\!": the quote closed, the ! escaped, the quote reopened.
__acc_quote() {
  local s=$1 r= c i=0 t= h=
  case $2 in
  \')
    while [[ $i -lt ${#s} ]]; do
      c=${s:i:1}
      if [[ $c == "'" ]]; then r="$r'\\''"; else r=$r$c; fi
      i=$((i + 1))
    done
    ;;
  \")
    h=${histchars:-!}
    h=${h:0:1}
    while [[ $i -lt ${#s} ]]; do
      c=${s:i:1}
      if [[ $c == '!' || ( -n $h && $c == "$h" ) ]]; then
        r=$r'"'\\$c'"'
      else
        [[ '$` + "`" + `"\' == *"$c"* ]] && r=$r\\
        r=$r$c
      fi
      i=$((i + 1))
    done
    ;;
  *)
    if [[ $3 == 1 && $s == \~* ]]; then
      # ~ or ~user only: ~-, ~+ and ~N name other directories
      t=${s%%/*}
      case $t in \~ | \~[A-Za-z_]*) ;; *) t= ;; esac
      case $t in \~*[!A-Za-z0-9._-]*) t= ;; esac
    fi
    s=${s:${#t}}
    [[ -n $s ]] && printf -v s %q "$s"
    r=$t$s
    ;;
  esac
  __acc_q=$r
}

__acc_complete() {
  local prog out l d x cur pre v nospace=
  local -a words cands descs
  cands=() descs=() COMPREPLY=()
  __acc_split "${COMP_LINE:0:COMP_POINT}"
  [[ ${#__acc_words[@]} -gt 0 ]] || return 0
  words=("${__acc_words[@]}")
  cur=$__acc_cur
  # ~ and ~/… are the home directory; ~user is left as it is.
  prog=${words[0]}
  if [[ $prog == '~' || $prog == '~/'* ]]; then prog=$HOME${prog#\~}; fi
  out=$(ACC_COMPLETE_CURRENT=1 "$prog" "${words[@]:1}" "$cur" --generate-shell-completion 2>/dev/null)
  # A path after --name= is completed after the =, which stays.
  pre=
  if [[ $cur == -*=* ]]; then pre=${cur%%=*}=; fi
  v=${cur#"$pre"}
  case $out in
  :files | :dirs)
    x=-f
    [[ $out == :dirs ]] && x=-d
    while IFS= read -r l; do
      d=$l
      if [[ $d == '~' || $d == '~/'* ]]; then d=$HOME${d#\~}; fi
      [[ -d $d && $l != */ ]] && l=$l/
      cands+=("$pre$l")
    done < <(compgen $x -- "$v")
    ;;
  :resources)
    # file: takes a path in the repository: ~ there is no home directory
    # (acc reads file:~/x as the file x in a directory named ~), so no
    # path is offered after file:~.
    if [[ $v == file:\~* ]]; then
      :
    elif [[ $v == file:* ]]; then
      while IFS= read -r l; do
        d=$l
        if [[ $d == '~' || $d == '~/'* ]]; then d=$HOME${d#\~}; fi
        [[ -d $d && $l != */ ]] && l=$l/
        cands+=("${pre}file:$l")
      done < <(compgen -f -- "${v#file:}")
    elif [[ file: == "$v"* ]]; then
      cands=("${pre}file:")
      nospace=1
    fi
    ;;
  *)
    while IFS= read -r l; do
      [[ -n $l && ${l%%:*} == "$cur"* ]] || continue
      cands+=("${l%%:*}")
      if [[ $l == *:* ]]; then descs+=("${l#*:}"); else descs+=(""); fi
    done <<< "$out"
    ;;
  esac
  [[ ${#cands[@]} -gt 0 ]] || return 0
  if [[ ${COMP_TYPE:-} == 63 && ${#cands[@]} -gt 1 && ${#descs[@]} -eq 0 ]]; then
    # Listing the alternatives (a second Tab), where nothing is inserted:
    # the names as they are, not quoted.
    for l in "${cands[@]}"; do COMPREPLY+=("${l:__acc_keep}"); done
    return 0
  fi
  if [[ ${COMP_TYPE:-} == 63 && ${#descs[@]} -gt 1 ]]; then
    # Listing the alternatives (a second Tab): each with its description.
    local width=0 i
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
  for l in "${cands[@]}"; do
    x=
    [[ $__acc_keep == 0 ]] && x=$__acc_tilde
    __acc_quote "${l:__acc_keep}" "$__acc_open" "$x"
    COMPREPLY+=("$__acc_q")
  done
  # A directory, or file: alone, is a step: no space after it.
  if [[ ${#cands[@]} -eq 1 && ( -n $nospace || ${cands[0]} == */ ) ]]; then
    compopt -o nospace 2>/dev/null
  elif [[ ${#cands[@]} -eq 1 && -n $__acc_nocompopt && -z $__acc_open ]]; then
    COMPREPLY[0]="${COMPREPLY[0]} "
  fi
  return 0
}

# bash 3 has no compopt to leave the space out after a directory: there
# the space is never added, and __acc_complete adds it itself.
__acc_nocompopt=
if [[ $(type -t compopt) == builtin ]]; then
  complete -F __acc_complete acc
else
  __acc_nocompopt=1
  complete -o nospace -F __acc_complete acc
fi
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
  # A path after --name= is completed after the =, which stays.
  [[ ${opts[1]} == :* && $cur == -*=* ]] && compset -P 1 '*='
  case ${opts[1]} in
  :files) _files ;;
  :dirs) _files -/ ;;
  :resources)
    if compset -P 'file:'; then
      # no home directory after file: (see the bash script)
      [[ $PREFIX == \~* ]] && return 1
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
// offers them itself where acc names a path: those fish's own completion
// gives for the word as typed (so ~, $VAR, quotes and escapes work), after
// any --name= and, for a resource, file:.
const fishCompletion = `# acc completion for fish (acc completion --help): at each Tab acc itself
# names the candidates.

function __acc_complete
    set -l before (commandline -opc)
    set -l token (commandline -ct)
    # acc is asked with the word as it will read it, quotes and escapes
    # removed.
    set -l cur (string unescape -- "$token")
    or set cur $token
    # ~ and ~/… are the home directory. A program that is no command gets
    # nothing: run, it would print fish's error at the prompt.
    if string match -q -- '~' $before[1]; or string match -q -- '~/*' $before[1]
        set before[1] $HOME(string sub -s 2 -- $before[1])
    end
    type -q -- $before[1]; or return
    set -lx ACC_COMPLETE_CURRENT 1
    set -l out ($before "$cur" --generate-shell-completion 2>/dev/null)
    switch "$out[1]"
        case :files :dirs :resources
            __acc_complete_paths $out[1] "$token"
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

# __acc_complete_paths WHAT TOKEN prints the paths fish's own completion
# gives for TOKEN as typed, after a --name= it starts with: directories
# only for :dirs; for :resources each after file: (or file: itself while
# TOKEN is short of it).
function __acc_complete_paths --argument-names what token
    set -l pre (string match -r -- '^-[-\w]*=' "$token")
    set -l path (string sub -s (math (string length -- "$pre") + 1) -- "$token")
    if test $what = :resources
        set -l m (string match -r -- '^([\'"]?)file:(.*)$' "$path")
        if not set -q m[3]
            set -l u (string unescape -- "$path")
            or set u "$path"
            string match -q -- "$u*" file:; and printf '%s\n' "$pre"file:
            return
        end
        # no home directory after file: (see the bash script)
        string match -q -- '~*' "$m[3]"; and return
        set pre "$pre"file:
        set path "$m[2]$m[3]"
    end
    for p in (complete -C"__acc_no_such_command $path")
        set p (string split -m 1 \t -- "$p")[1]
        if test $what = :dirs; and not string match -q -- '*/' "$p"
            continue
        end
        printf '%s\n' "$pre$p"
    end
end

complete -c acc -e
complete -c acc -f -a '(__acc_complete)'
`
