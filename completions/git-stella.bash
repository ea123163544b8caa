_git__stella() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="git__stella"
                ;;
            git__stella,checkpoint)
                cmd="git__stella__subcmd__checkpoint"
                ;;
            git__stella,demo)
                cmd="git__stella__subcmd__demo"
                ;;
            git__stella,diff)
                cmd="git__stella__subcmd__diff"
                ;;
            git__stella,doctor)
                cmd="git__stella__subcmd__doctor"
                ;;
            git__stella,exec)
                cmd="git__stella__subcmd__exec"
                ;;
            git__stella,gc)
                cmd="git__stella__subcmd__gc"
                ;;
            git__stella,guard)
                cmd="git__stella__subcmd__guard"
                ;;
            git__stella,help)
                cmd="git__stella__subcmd__help"
                ;;
            git__stella,hook)
                cmd="git__stella__subcmd__hook"
                ;;
            git__stella,hooks)
                cmd="git__stella__subcmd__hooks"
                ;;
            git__stella,init)
                cmd="git__stella__subcmd__init"
                ;;
            git__stella,inspect)
                cmd="git__stella__subcmd__inspect"
                ;;
            git__stella,log)
                cmd="git__stella__subcmd__log"
                ;;
            git__stella,mcp)
                cmd="git__stella__subcmd__mcp"
                ;;
            git__stella,read)
                cmd="git__stella__subcmd__read"
                ;;
            git__stella,recover)
                cmd="git__stella__subcmd__recover"
                ;;
            git__stella,replay)
                cmd="git__stella__subcmd__replay"
                ;;
            git__stella,resume)
                cmd="git__stella__subcmd__resume"
                ;;
            git__stella,rm)
                cmd="git__stella__subcmd__rm"
                ;;
            git__stella,session)
                cmd="git__stella__subcmd__session"
                ;;
            git__stella,show)
                cmd="git__stella__subcmd__show"
                ;;
            git__stella,status)
                cmd="git__stella__subcmd__status"
                ;;
            git__stella,step)
                cmd="git__stella__subcmd__step"
                ;;
            git__stella,store-path)
                cmd="git__stella__subcmd__store__subcmd__path"
                ;;
            git__stella,turn)
                cmd="git__stella__subcmd__turn"
                ;;
            git__stella,undo)
                cmd="git__stella__subcmd__undo"
                ;;
            git__stella,verify)
                cmd="git__stella__subcmd__verify"
                ;;
            git__stella,write)
                cmd="git__stella__subcmd__write"
                ;;
            git__stella,wrote)
                cmd="git__stella__subcmd__wrote"
                ;;
            git__stella__subcmd__help,checkpoint)
                cmd="git__stella__subcmd__help__subcmd__checkpoint"
                ;;
            git__stella__subcmd__help,demo)
                cmd="git__stella__subcmd__help__subcmd__demo"
                ;;
            git__stella__subcmd__help,diff)
                cmd="git__stella__subcmd__help__subcmd__diff"
                ;;
            git__stella__subcmd__help,doctor)
                cmd="git__stella__subcmd__help__subcmd__doctor"
                ;;
            git__stella__subcmd__help,exec)
                cmd="git__stella__subcmd__help__subcmd__exec"
                ;;
            git__stella__subcmd__help,gc)
                cmd="git__stella__subcmd__help__subcmd__gc"
                ;;
            git__stella__subcmd__help,guard)
                cmd="git__stella__subcmd__help__subcmd__guard"
                ;;
            git__stella__subcmd__help,help)
                cmd="git__stella__subcmd__help__subcmd__help"
                ;;
            git__stella__subcmd__help,hook)
                cmd="git__stella__subcmd__help__subcmd__hook"
                ;;
            git__stella__subcmd__help,hooks)
                cmd="git__stella__subcmd__help__subcmd__hooks"
                ;;
            git__stella__subcmd__help,init)
                cmd="git__stella__subcmd__help__subcmd__init"
                ;;
            git__stella__subcmd__help,inspect)
                cmd="git__stella__subcmd__help__subcmd__inspect"
                ;;
            git__stella__subcmd__help,log)
                cmd="git__stella__subcmd__help__subcmd__log"
                ;;
            git__stella__subcmd__help,mcp)
                cmd="git__stella__subcmd__help__subcmd__mcp"
                ;;
            git__stella__subcmd__help,read)
                cmd="git__stella__subcmd__help__subcmd__read"
                ;;
            git__stella__subcmd__help,recover)
                cmd="git__stella__subcmd__help__subcmd__recover"
                ;;
            git__stella__subcmd__help,replay)
                cmd="git__stella__subcmd__help__subcmd__replay"
                ;;
            git__stella__subcmd__help,resume)
                cmd="git__stella__subcmd__help__subcmd__resume"
                ;;
            git__stella__subcmd__help,rm)
                cmd="git__stella__subcmd__help__subcmd__rm"
                ;;
            git__stella__subcmd__help,session)
                cmd="git__stella__subcmd__help__subcmd__session"
                ;;
            git__stella__subcmd__help,show)
                cmd="git__stella__subcmd__help__subcmd__show"
                ;;
            git__stella__subcmd__help,status)
                cmd="git__stella__subcmd__help__subcmd__status"
                ;;
            git__stella__subcmd__help,step)
                cmd="git__stella__subcmd__help__subcmd__step"
                ;;
            git__stella__subcmd__help,store-path)
                cmd="git__stella__subcmd__help__subcmd__store__subcmd__path"
                ;;
            git__stella__subcmd__help,turn)
                cmd="git__stella__subcmd__help__subcmd__turn"
                ;;
            git__stella__subcmd__help,undo)
                cmd="git__stella__subcmd__help__subcmd__undo"
                ;;
            git__stella__subcmd__help,verify)
                cmd="git__stella__subcmd__help__subcmd__verify"
                ;;
            git__stella__subcmd__help,write)
                cmd="git__stella__subcmd__help__subcmd__write"
                ;;
            git__stella__subcmd__help,wrote)
                cmd="git__stella__subcmd__help__subcmd__wrote"
                ;;
            git__stella__subcmd__help__subcmd__hook,claude-code)
                cmd="git__stella__subcmd__help__subcmd__hook__subcmd__claude__subcmd__code"
                ;;
            git__stella__subcmd__help__subcmd__hook,codex)
                cmd="git__stella__subcmd__help__subcmd__hook__subcmd__codex"
                ;;
            git__stella__subcmd__help__subcmd__hook,copilot)
                cmd="git__stella__subcmd__help__subcmd__hook__subcmd__copilot"
                ;;
            git__stella__subcmd__help__subcmd__hook,cursor)
                cmd="git__stella__subcmd__help__subcmd__hook__subcmd__cursor"
                ;;
            git__stella__subcmd__help__subcmd__hook,gemini)
                cmd="git__stella__subcmd__help__subcmd__hook__subcmd__gemini"
                ;;
            git__stella__subcmd__help__subcmd__hook,opencode)
                cmd="git__stella__subcmd__help__subcmd__hook__subcmd__opencode"
                ;;
            git__stella__subcmd__help__subcmd__hook,qwen)
                cmd="git__stella__subcmd__help__subcmd__hook__subcmd__qwen"
                ;;
            git__stella__subcmd__help__subcmd__hooks,install)
                cmd="git__stella__subcmd__help__subcmd__hooks__subcmd__install"
                ;;
            git__stella__subcmd__help__subcmd__hooks,uninstall)
                cmd="git__stella__subcmd__help__subcmd__hooks__subcmd__uninstall"
                ;;
            git__stella__subcmd__help__subcmd__session,drop)
                cmd="git__stella__subcmd__help__subcmd__session__subcmd__drop"
                ;;
            git__stella__subcmd__help__subcmd__session,end)
                cmd="git__stella__subcmd__help__subcmd__session__subcmd__end"
                ;;
            git__stella__subcmd__help__subcmd__session,list)
                cmd="git__stella__subcmd__help__subcmd__session__subcmd__list"
                ;;
            git__stella__subcmd__help__subcmd__session,prune)
                cmd="git__stella__subcmd__help__subcmd__session__subcmd__prune"
                ;;
            git__stella__subcmd__help__subcmd__session,show)
                cmd="git__stella__subcmd__help__subcmd__session__subcmd__show"
                ;;
            git__stella__subcmd__help__subcmd__session,start)
                cmd="git__stella__subcmd__help__subcmd__session__subcmd__start"
                ;;
            git__stella__subcmd__help__subcmd__session,undrop)
                cmd="git__stella__subcmd__help__subcmd__session__subcmd__undrop"
                ;;
            git__stella__subcmd__help__subcmd__turn,begin)
                cmd="git__stella__subcmd__help__subcmd__turn__subcmd__begin"
                ;;
            git__stella__subcmd__help__subcmd__turn,end)
                cmd="git__stella__subcmd__help__subcmd__turn__subcmd__end"
                ;;
            git__stella__subcmd__hook,claude-code)
                cmd="git__stella__subcmd__hook__subcmd__claude__subcmd__code"
                ;;
            git__stella__subcmd__hook,codex)
                cmd="git__stella__subcmd__hook__subcmd__codex"
                ;;
            git__stella__subcmd__hook,copilot)
                cmd="git__stella__subcmd__hook__subcmd__copilot"
                ;;
            git__stella__subcmd__hook,cursor)
                cmd="git__stella__subcmd__hook__subcmd__cursor"
                ;;
            git__stella__subcmd__hook,gemini)
                cmd="git__stella__subcmd__hook__subcmd__gemini"
                ;;
            git__stella__subcmd__hook,help)
                cmd="git__stella__subcmd__hook__subcmd__help"
                ;;
            git__stella__subcmd__hook,opencode)
                cmd="git__stella__subcmd__hook__subcmd__opencode"
                ;;
            git__stella__subcmd__hook,qwen)
                cmd="git__stella__subcmd__hook__subcmd__qwen"
                ;;
            git__stella__subcmd__hook__subcmd__help,claude-code)
                cmd="git__stella__subcmd__hook__subcmd__help__subcmd__claude__subcmd__code"
                ;;
            git__stella__subcmd__hook__subcmd__help,codex)
                cmd="git__stella__subcmd__hook__subcmd__help__subcmd__codex"
                ;;
            git__stella__subcmd__hook__subcmd__help,copilot)
                cmd="git__stella__subcmd__hook__subcmd__help__subcmd__copilot"
                ;;
            git__stella__subcmd__hook__subcmd__help,cursor)
                cmd="git__stella__subcmd__hook__subcmd__help__subcmd__cursor"
                ;;
            git__stella__subcmd__hook__subcmd__help,gemini)
                cmd="git__stella__subcmd__hook__subcmd__help__subcmd__gemini"
                ;;
            git__stella__subcmd__hook__subcmd__help,help)
                cmd="git__stella__subcmd__hook__subcmd__help__subcmd__help"
                ;;
            git__stella__subcmd__hook__subcmd__help,opencode)
                cmd="git__stella__subcmd__hook__subcmd__help__subcmd__opencode"
                ;;
            git__stella__subcmd__hook__subcmd__help,qwen)
                cmd="git__stella__subcmd__hook__subcmd__help__subcmd__qwen"
                ;;
            git__stella__subcmd__hooks,help)
                cmd="git__stella__subcmd__hooks__subcmd__help"
                ;;
            git__stella__subcmd__hooks,install)
                cmd="git__stella__subcmd__hooks__subcmd__install"
                ;;
            git__stella__subcmd__hooks,uninstall)
                cmd="git__stella__subcmd__hooks__subcmd__uninstall"
                ;;
            git__stella__subcmd__hooks__subcmd__help,help)
                cmd="git__stella__subcmd__hooks__subcmd__help__subcmd__help"
                ;;
            git__stella__subcmd__hooks__subcmd__help,install)
                cmd="git__stella__subcmd__hooks__subcmd__help__subcmd__install"
                ;;
            git__stella__subcmd__hooks__subcmd__help,uninstall)
                cmd="git__stella__subcmd__hooks__subcmd__help__subcmd__uninstall"
                ;;
            git__stella__subcmd__session,drop)
                cmd="git__stella__subcmd__session__subcmd__drop"
                ;;
            git__stella__subcmd__session,end)
                cmd="git__stella__subcmd__session__subcmd__end"
                ;;
            git__stella__subcmd__session,help)
                cmd="git__stella__subcmd__session__subcmd__help"
                ;;
            git__stella__subcmd__session,list)
                cmd="git__stella__subcmd__session__subcmd__list"
                ;;
            git__stella__subcmd__session,prune)
                cmd="git__stella__subcmd__session__subcmd__prune"
                ;;
            git__stella__subcmd__session,show)
                cmd="git__stella__subcmd__session__subcmd__show"
                ;;
            git__stella__subcmd__session,start)
                cmd="git__stella__subcmd__session__subcmd__start"
                ;;
            git__stella__subcmd__session,undrop)
                cmd="git__stella__subcmd__session__subcmd__undrop"
                ;;
            git__stella__subcmd__session__subcmd__help,drop)
                cmd="git__stella__subcmd__session__subcmd__help__subcmd__drop"
                ;;
            git__stella__subcmd__session__subcmd__help,end)
                cmd="git__stella__subcmd__session__subcmd__help__subcmd__end"
                ;;
            git__stella__subcmd__session__subcmd__help,help)
                cmd="git__stella__subcmd__session__subcmd__help__subcmd__help"
                ;;
            git__stella__subcmd__session__subcmd__help,list)
                cmd="git__stella__subcmd__session__subcmd__help__subcmd__list"
                ;;
            git__stella__subcmd__session__subcmd__help,prune)
                cmd="git__stella__subcmd__session__subcmd__help__subcmd__prune"
                ;;
            git__stella__subcmd__session__subcmd__help,show)
                cmd="git__stella__subcmd__session__subcmd__help__subcmd__show"
                ;;
            git__stella__subcmd__session__subcmd__help,start)
                cmd="git__stella__subcmd__session__subcmd__help__subcmd__start"
                ;;
            git__stella__subcmd__session__subcmd__help,undrop)
                cmd="git__stella__subcmd__session__subcmd__help__subcmd__undrop"
                ;;
            git__stella__subcmd__turn,begin)
                cmd="git__stella__subcmd__turn__subcmd__begin"
                ;;
            git__stella__subcmd__turn,end)
                cmd="git__stella__subcmd__turn__subcmd__end"
                ;;
            git__stella__subcmd__turn,help)
                cmd="git__stella__subcmd__turn__subcmd__help"
                ;;
            git__stella__subcmd__turn__subcmd__help,begin)
                cmd="git__stella__subcmd__turn__subcmd__help__subcmd__begin"
                ;;
            git__stella__subcmd__turn__subcmd__help,end)
                cmd="git__stella__subcmd__turn__subcmd__help__subcmd__end"
                ;;
            git__stella__subcmd__turn__subcmd__help,help)
                cmd="git__stella__subcmd__turn__subcmd__help__subcmd__help"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        git__stella)
            opts="-C -q -v -h -V --session --quiet --verbose --color --no-pager --help --version init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__checkpoint)
            opts="-o -C -q -v -h --output --json --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__demo)
            opts="-C -q -v -h --keep --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__diff)
            opts="-C -q -v -h --exit-code --json --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__doctor)
            opts="-C -q -v -h --json --agent --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --agent)
                    COMPREPLY=($(compgen -W "claude-code codex gemini copilot opencode qwen cursor" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__exec)
            opts="-C -q -v -h --check --host --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --host)
                    COMPREPLY=($(compgen -W "claude-code codex gemini copilot opencode" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__gc)
            opts="-C -q -v -h --grace --expire-dropped --date --all --dry-run --json --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --grace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expire-dropped)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__guard)
            opts="-C -q -v -h --delete --content --json --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --content)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help)
            opts="init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__checkpoint)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__demo)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__diff)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__doctor)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__exec)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__gc)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__guard)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hook)
            opts="claude-code codex gemini copilot opencode qwen cursor"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hook__subcmd__claude__subcmd__code)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hook__subcmd__codex)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hook__subcmd__copilot)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hook__subcmd__cursor)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hook__subcmd__gemini)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hook__subcmd__opencode)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hook__subcmd__qwen)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hooks)
            opts="install uninstall"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hooks__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__hooks__subcmd__uninstall)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__init)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__inspect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__log)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__mcp)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__read)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__recover)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__replay)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__resume)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__rm)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__session)
            opts="start list show end drop undrop prune"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__session__subcmd__drop)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__session__subcmd__end)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__session__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__session__subcmd__prune)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__session__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__session__subcmd__start)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__session__subcmd__undrop)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__step)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__store__subcmd__path)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__turn)
            opts="begin end"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__turn__subcmd__begin)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__turn__subcmd__end)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__undo)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__verify)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__write)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__help__subcmd__wrote)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help claude-code codex gemini copilot opencode qwen cursor help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__claude__subcmd__code)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__codex)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__copilot)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__cursor)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__gemini)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__help)
            opts="claude-code codex gemini copilot opencode qwen cursor help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__help__subcmd__claude__subcmd__code)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__help__subcmd__codex)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__help__subcmd__copilot)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__help__subcmd__cursor)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__help__subcmd__gemini)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__help__subcmd__opencode)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__help__subcmd__qwen)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__opencode)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hook__subcmd__qwen)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hooks)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help install uninstall help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hooks__subcmd__help)
            opts="install uninstall help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hooks__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hooks__subcmd__help__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hooks__subcmd__help__subcmd__uninstall)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hooks__subcmd__install)
            opts="-C -q -v -h --agent --user --local --git --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --agent)
                    COMPREPLY=($(compgen -W "claude-code codex gemini copilot opencode qwen cursor" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__hooks__subcmd__uninstall)
            opts="-C -q -v -h --agent --user --local --git --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --agent)
                    COMPREPLY=($(compgen -W "claude-code codex gemini copilot opencode qwen cursor" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__init)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__inspect)
            opts="-C -q -v -h --json --date --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__log)
            opts="-n -C -q -v -h --json --graph --date --max-count --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                --max-count)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__mcp)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__read)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__recover)
            opts="-C -q -v -h --all --since --show --restore --json --date --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --since)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --show)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --restore)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__replay)
            opts="-C -q -v -h --materialize --dry-run --ignore-fingerprint --as --json --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --as)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__resume)
            opts="-C -q -v -h --json --transcript --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --transcript)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__rm)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help start list show end drop undrop prune help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__drop)
            opts="-n -C -q -v -h --dry-run --date --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__end)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__help)
            opts="start list show end drop undrop prune help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__help__subcmd__drop)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__help__subcmd__end)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__help__subcmd__prune)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__help__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__help__subcmd__start)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__help__subcmd__undrop)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__list)
            opts="-C -q -v -h --json --dropped --date --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__prune)
            opts="-C -q -v -h --older-than --dry-run --date --json --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --older-than)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__show)
            opts="-C -q -v -h --json --date --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__start)
            opts="-C -q -v -h --id --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__session__subcmd__undrop)
            opts="-C -q -v -h --date --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions --dropped)" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions --dropped)" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__show)
            opts="-C -q -v -h --html --date --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__status)
            opts="-C -q -v -h --json --all --date --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --date)
                    COMPREPLY=($(compgen -W "relative local iso iso-strict rfc short raw unix default" -- "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__step)
            opts="-C -q -v -h --transcript --note --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --transcript)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --note)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__store__subcmd__path)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__turn)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help begin end help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__turn__subcmd__begin)
            opts="-C -q -v -h --id --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__turn__subcmd__end)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__turn__subcmd__help)
            opts="begin end help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__turn__subcmd__help__subcmd__begin)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__turn__subcmd__help__subcmd__end)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__turn__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__undo)
            opts="-n -C -q -v -h --dry-run --json --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__verify)
            opts="-C -q -v -h --json --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__write)
            opts="-C -q -v -h --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
        git__stella__subcmd__wrote)
            opts="-C -q -v -h --content --session --quiet --verbose --color --no-pager --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --content)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -d -- "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -W "$(__git_stella_sessions)" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "always never auto" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _git__stella -o nosort -o bashdefault -o default git-stella
else
    complete -F _git__stella -o bashdefault -o default git-stella
fi

# The session ids of the workspace around the current folder (with --dropped, the dropped ones
# 'session undrop' can bring back).
__git_stella_sessions() {
    local top
    top=$(git rev-parse --show-toplevel 2>/dev/null) || return 0
    [[ -d "$top/.stella/private" ]] || return 0
    git stella session list "$@" 2>/dev/null | tail -n +2 | cut -d' ' -f1
}

# `git stella <TAB>`: git's completion calls _git_stella (loading this file through
# bash-completion's _completion_loader "git-stella" when it is not defined yet).
_git_stella() {
    local idx=${__git_cmd_idx:-1}
    local COMP_WORDS=("git-stella" "${words[@]:idx+1}")
    local COMP_CWORD=$((cword - idx))
    local COMP_LINE="${COMP_WORDS[*]}"
    local COMP_POINT=${#COMP_LINE}
    local prev=""
    ((COMP_CWORD > 0)) && prev="${COMP_WORDS[COMP_CWORD-1]}"
    _git__stella "git-stella" "${COMP_WORDS[COMP_CWORD]}" "$prev"
    # git completes with -o nospace: end each whole word with a space, a folder with a slash.
    local i
    for i in "${!COMPREPLY[@]}"; do
        if [[ -d "${COMPREPLY[i]}" ]]; then
            COMPREPLY[i]="${COMPREPLY[i]%/}/"
        elif [[ "${COMPREPLY[i]}" != *= ]]; then
            COMPREPLY[i]="${COMPREPLY[i]} "
        fi
    done
}
