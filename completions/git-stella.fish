# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_git_stella_global_optspecs
    string join \n C= session= q/quiet v/verbose color= no-pager h/help V/version
end

function __fish_git_stella_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_git_stella_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_git_stella_using_subcommand
    set -l cmd (__fish_git_stella_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c git-stella -n "__fish_git_stella_needs_command" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_needs_command" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_needs_command" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_needs_command" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_needs_command" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_needs_command" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_needs_command" -s V -l version -d 'Print version'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "init" -d 'Create or confirm this workspace\'s id, .stella/private/ and the store'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "session" -d 'Start, list, show and drop sessions'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "read" -d 'Record that the session read these files'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "wrote" -d 'Record writes or deletes that already happened'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "guard" -d 'Check files before an update or delete; exit 1 when a write would clobber someone\'s work'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "write" -d 'Write stdin to a file, refused when the file changed since the session saw it'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "rm" -d 'Delete files, refused when any changed since the session saw it'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "status" -d 'Show every tracked file of the session: unchanged, changed or deleted since the session saw it'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "diff" -d 'Show what changed on disk since the session saw these files'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "exec" -d 'Run a command under the shell guard: its reads are recorded, its stale writes refused'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "turn" -d 'Open or end a turn (one prompt to the end of its answer)'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "step" -d 'Mark a step boundary inside the open turn, optionally storing the transcript'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "resume" -d 'Show where the session stands: its open turn, if any, and what to re-read'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "checkpoint" -d 'Pack the session into one self-contained file (a git bundle) a colleague can replay'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "inspect" -d 'Show an artifact\'s manifest, base commit, fingerprint and what it holds'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "verify" -d 'Check an artifact against this tree without consuming it'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "replay" -d 'Start a new session from an artifact, refused when it does not belong to this tree'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "log" -d 'Show a session\'s steps, newest first; without a session, every session\'s'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "show" -d 'Show one session\'s timeline, oldest step first, as text or as one HTML page'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "recover" -d 'List, show or restore any version of a file that a session read, wrote or saw overwritten'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "undo" -d 'Put back what was in each file before the session first wrote it'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "store-path" -d 'Print where this workspace\'s journal store is, for plain git'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "gc" -d 'Repack the store and prune what no session reaches'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "doctor" -d 'Check that Stella\'s protection is on: installed hooks, config, data dir, shell guard'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "demo" -d 'Run a short, real walkthrough in a temp folder: two sessions, a refused write, a checkpoint, a replay into a fresh clone'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "hook" -d 'Answer an agent host\'s hook call: read its payload on stdin, act, answer in its protocol'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "hooks" -d 'Wire Stella into an agent host\'s hooks or git\'s, or take it out again'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "mcp" -d 'Serve guarded file tools over MCP on stdin and stdout'
complete -c git-stella -n "__fish_git_stella_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand init" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand init" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand init" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand init" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand init" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand init" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -f -a "start" -d 'Start a session and print its id'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -f -a "list" -d 'List the sessions of this workspace'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -f -a "show" -d 'Show one session: when it started, where it came from, its steps and how many files it tracks'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -f -a "end" -d 'End a session: its uncommitted writes stop being protected from other sessions'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -f -a "drop" -d 'Drop a session: it stops guarding anything, and its id is free again'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -f -a "undrop" -d 'Bring back a dropped session, exactly as it was when dropped'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -f -a "prune" -d 'Drop every session whose last step is older than a duration'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and not __fish_seen_subcommand_from start list show end drop undrop prune help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from start" -l id -d 'Use this id instead of minting one ([A-Za-z0-9._-], 1 to 128 characters)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from start" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from start" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from start" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from start" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from start" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from start" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from start" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -l json -d 'Print JSON: {sessions: [{session, started, origin, last_step, step_count, tracked_count, tip}]}; with --dropped, {dropped: [{session, dropped, last_step, step_count, tracked_count, tip}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -l dropped -d 'List the dropped sessions that \'session undrop\' can still bring back'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from show" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from show" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from show" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from show" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from show" -l json -d 'Print JSON: {session, started, origin, last_step, step_count, tracked_count, tip}'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from show" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from end" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from end" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from end" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from end" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from end" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from end" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from end" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from drop" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from drop" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from drop" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from drop" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from drop" -s n -l dry-run -d 'Only say what the session guards; drop nothing'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from drop" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from drop" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from drop" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from drop" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from undrop" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from undrop" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from undrop" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from undrop" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from undrop" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from undrop" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from undrop" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from undrop" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -l older-than -d 'Sessions idle longer than this: a whole number and a unit, s, m, h, d or w (30d, 2w)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -l dry-run -d 'Only list the sessions that would be dropped'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -l json -d 'Print JSON: {dry_run, sessions: [{session, last_step}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from prune" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "start" -d 'Start a session and print its id'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the sessions of this workspace'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one session: when it started, where it came from, its steps and how many files it tracks'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "end" -d 'End a session: its uncommitted writes stop being protected from other sessions'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "drop" -d 'Drop a session: it stops guarding anything, and its id is free again'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "undrop" -d 'Bring back a dropped session, exactly as it was when dropped'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "prune" -d 'Drop every session whose last step is older than a duration'
complete -c git-stella -n "__fish_git_stella_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand read" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand read" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand read" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand read" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand read" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand read" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand read" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand wrote" -l content -d 'The bytes that were written (one PATH only; \'-\' reads stdin)' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand wrote" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand wrote" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand wrote" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand wrote" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand wrote" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand wrote" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand wrote" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -l content -d 'The bytes about to be written (\'-\' reads stdin): equal bytes on disk lose nothing' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -l delete -d 'Check for a delete instead of an update'
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -l json -d 'Print JSON: {session, checks: [{path, decision, reason, seen, now, writer}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand guard" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand write" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand write" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand write" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand write" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand write" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand write" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand write" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand rm" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand rm" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand rm" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand rm" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand rm" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand rm" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand rm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -l date -d 'With --all: how to show when each session last acted: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -l json -d 'Print JSON: {session, files: [{path, state, seen}], refused_count, left_behind: [{intent, path, seen, found, writer}]}; with --all, {sessions: [{session, last_step, step_count, tracked_count, changed: [{path, state}], refused_count, left_behind}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -l all -d 'Every session of the workspace, one line each'
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand diff" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand diff" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand diff" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand diff" -l exit-code -d 'Exit 1 when a file changed, 0 when none did, as \'git diff --exit-code\''
complete -c git-stella -n "__fish_git_stella_using_subcommand diff" -l json -d 'Print JSON: {session, files: [{path, state (unchanged, changed, deleted, unreadable, untracked), diff}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand diff" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand diff" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand diff" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand exec" -l host -d 'Run an agent host\'s shell command: the one argument is the host\'s shell snippet, run with bash -c in the host\'s session (claude-code: from CLAUDE_CODE_SESSION_ID; the others: --session, as their hooks write it), created when missing' -r -f -a "claude-code\t''
codex\t''
gemini\t''
copilot\t''
opencode\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand exec" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand exec" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand exec" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand exec" -l check -d 'Say whether this machine can guard a command, and why not, without running one'
complete -c git-stella -n "__fish_git_stella_using_subcommand exec" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand exec" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand exec" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand exec" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -f -a "begin" -d 'Open a turn: the journal gets a resume point'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -f -a "end" -d 'End the open turn: the resume point is retracted, the staleness map stays'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and not __fish_seen_subcommand_from begin end help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from begin" -l id -d 'Name the turn (default: a minted id)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from begin" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from begin" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from begin" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from begin" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from begin" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from begin" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from begin" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from end" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from end" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from end" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from end" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from end" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from end" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from end" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from help" -f -a "begin" -d 'Open a turn: the journal gets a resume point'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from help" -f -a "end" -d 'End the open turn: the resume point is retracted, the staleness map stays'
complete -c git-stella -n "__fish_git_stella_using_subcommand turn; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand step" -l transcript -d 'The conversation so far, stored verbatim' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand step" -l note -d 'A short note saying where the turn stands' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand step" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand step" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand step" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand step" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand step" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand step" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand step" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand resume" -l transcript -d 'Print the stored transcript NAME verbatim instead' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand resume" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand resume" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand resume" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand resume" -l json -d 'Print JSON: {session, turn, tracked_count, changed}'
complete -c git-stella -n "__fish_git_stella_using_subcommand resume" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand resume" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand resume" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand resume" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand checkpoint" -s o -l output -d 'Write the artifact here (\'-\' for stdout)' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand checkpoint" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand checkpoint" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand checkpoint" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand checkpoint" -l json -d 'Print JSON: {artifact, session, tip, file_count, base, skipped_transcripts}'
complete -c git-stella -n "__fish_git_stella_using_subcommand checkpoint" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand checkpoint" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand checkpoint" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand checkpoint" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand inspect" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand inspect" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand inspect" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand inspect" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand inspect" -l json -d 'Print JSON: {format, session, base, object_format, producer, started, last_step, step_count, tip, object_count, provenance, fingerprint: [{path, blake3}], needs_reread, transcripts, warning}'
complete -c git-stella -n "__fish_git_stella_using_subcommand inspect" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand inspect" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand inspect" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand inspect" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand verify" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand verify" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand verify" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand verify" -l json -d 'Print JSON: {session, matches, files: [{path, state (unchanged, changed, deleted, unreadable)}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand verify" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand verify" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand verify" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -l as -d 'Name the new session (an existing id is an error); without it, the session keeps the id it had where it was checkpointed when that id is free here, else gets a new one' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -l materialize -d 'Write the session\'s files into the tree first'
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -l dry-run -d 'With --materialize: print what would be written, kept and refused; write, import and start nothing'
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -l ignore-fingerprint -d 'Replay even when the fingerprint does not match this tree'
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -l json -d 'Print JSON: {outcome (started, mismatch, blocked, changed, plan), session, from, written, mismatches, blocked, changed_path, write, keep}'
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -s n -l max-count -d 'Show only the last N steps of each session' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -l json -d 'Print JSON: {steps: [{session, commit, time, summary, paths, refused}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -l graph -d 'Draw every session\'s steps (or the session\'s, with its origins) as one graph: forks and replays each drawn once'
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand log" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand show" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand show" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand show" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand show" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand show" -l html -d 'Write one self-contained HTML page instead of text'
complete -c git-stella -n "__fish_git_stella_using_subcommand show" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand show" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand show" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -l since -d 'With --all: only what was kept since then: a duration back from now (30m, 2h, 7d) or a date (2026-12-03, 2026-12-03T14:00:00+01:00)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -l show -d 'Print this version\'s bytes' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -l restore -d 'Write this version back to the file, through the guard' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -l all -d 'List every version kept because a change replaced it unseen, whatever the file, newest first'
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -l json -d 'Print JSON: {path, versions: [{version, blake3, time, bytes, session, step, how, writer, on_disk}]}; with --all: {kept: [{path, version, blake3, time, bytes, session, step}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand recover" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand undo" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand undo" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand undo" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand undo" -s n -l dry-run -d 'Say what would be restored, removed, refused or left, as the real run checks it; write and record nothing (exit status as the real run\'s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand undo" -l json -d 'Print JSON: {session, dry_run, restored: [{path, version}], removed, removed_folders, refused: [{intent, path, seen, found, writer}], failed: [{path, why}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand undo" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand undo" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand undo" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand undo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand store-path" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand store-path" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand store-path" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand store-path" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand store-path" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand store-path" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand store-path" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -l grace -d 'Keep unreachable objects younger than this many seconds' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -l expire-dropped -d 'Forget sessions dropped longer ago than this: a whole number and a unit (s, m, h, d, w), or now' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -l date -d 'How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw, unix, default; FORMAT-local for this machine\'s time zone (JSON keeps ISO 8601)' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -l all -d 'Also remove the stores of checkouts that are gone, from Stella\'s data dir'
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -l dry-run -d 'Only list what would be dropped or removed; change nothing'
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -l json -d 'Print JSON: {dry_run, stores: [{workspace, checkout, why}], sessions: [{session, last_step}], expired: [{session, dropped}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand gc" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand doctor" -l agent -d 'Also fail unless this host has Stella\'s hooks here or in your user settings: a CI job\'s check that its agent will run guarded (repeat for more hosts)' -r -f -a "claude-code\t'Claude Code: .claude/settings.json (--local: .claude/settings.local.json)'
codex\t'Codex: .codex/hooks.json'
gemini\t'Gemini CLI: .gemini/settings.json'
copilot\t'Copilot CLI: .github/hooks/stella.json'
opencode\t'OpenCode: .opencode/plugins/stella.js'
qwen\t'Qwen Code: .qwen/settings.json'
cursor\t'Cursor: .cursor/hooks.json'"
complete -c git-stella -n "__fish_git_stella_using_subcommand doctor" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand doctor" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand doctor" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand doctor" -l json -d 'Print JSON: {level (the worst), findings: [{level, check, message, hint}]}'
complete -c git-stella -n "__fish_git_stella_using_subcommand doctor" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand doctor" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand doctor" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand demo" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand demo" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand demo" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand demo" -l keep -d 'Keep the temp folder and print where it is'
complete -c git-stella -n "__fish_git_stella_using_subcommand demo" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand demo" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand demo" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand demo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -f -a "claude-code" -d 'Answer one Claude Code hook payload (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -f -a "codex" -d 'Answer a Codex CLI hook (PreToolUse/PostToolUse on apply_patch and Bash)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -f -a "gemini" -d 'Answer a Gemini CLI hook (BeforeTool/AfterTool on read_file, write_file, replace, run_shell_command)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -f -a "copilot" -d 'Answer a GitHub Copilot CLI hook (preToolUse/postToolUse on view, create, edit, apply_patch, bash)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -f -a "opencode" -d 'Answer Stella\'s OpenCode plugin (tool.execute.before/after on read, write, edit, apply_patch, bash)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -f -a "qwen" -d 'Answer a Qwen Code hook (PreToolUse/PostToolUse on read_file, write_file, edit, run_shell_command)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -f -a "cursor" -d 'Answer a Cursor hook (preToolUse, beforeReadFile, afterFileEdit)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex gemini copilot opencode qwen cursor help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from codex" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from codex" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from codex" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from codex" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from codex" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from codex" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from codex" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from gemini" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from gemini" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from gemini" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from gemini" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from gemini" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from gemini" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from gemini" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from copilot" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from copilot" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from copilot" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from copilot" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from copilot" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from copilot" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from copilot" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from opencode" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from opencode" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from opencode" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from opencode" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from opencode" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from opencode" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from opencode" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from qwen" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from qwen" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from qwen" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from qwen" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from qwen" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from qwen" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from qwen" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from cursor" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from cursor" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from cursor" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from cursor" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from cursor" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from cursor" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from cursor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "claude-code" -d 'Answer one Claude Code hook payload (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "codex" -d 'Answer a Codex CLI hook (PreToolUse/PostToolUse on apply_patch and Bash)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "gemini" -d 'Answer a Gemini CLI hook (BeforeTool/AfterTool on read_file, write_file, replace, run_shell_command)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "copilot" -d 'Answer a GitHub Copilot CLI hook (preToolUse/postToolUse on view, create, edit, apply_patch, bash)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "opencode" -d 'Answer Stella\'s OpenCode plugin (tool.execute.before/after on read, write, edit, apply_patch, bash)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "qwen" -d 'Answer a Qwen Code hook (PreToolUse/PostToolUse on read_file, write_file, edit, run_shell_command)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "cursor" -d 'Answer a Cursor hook (preToolUse, beforeReadFile, afterFileEdit)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -f -a "install" -d 'Install Stella\'s hooks into an agent\'s settings file, or git\'s prepare-commit-msg hook'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -f -a "uninstall" -d 'Take Stella\'s hooks out of an agent\'s settings file, or git\'s, again'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -l agent -d 'The agent host whose settings to change' -r -f -a "claude-code\t'Claude Code: .claude/settings.json (--local: .claude/settings.local.json)'
codex\t'Codex: .codex/hooks.json'
gemini\t'Gemini CLI: .gemini/settings.json'
copilot\t'Copilot CLI: .github/hooks/stella.json'
opencode\t'OpenCode: .opencode/plugins/stella.js'
qwen\t'Qwen Code: .qwen/settings.json'
cursor\t'Cursor: .cursor/hooks.json'"
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -l user -d 'Change the settings in your home folder (every project) instead of the repository\'s'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -l local -d 'Change the host\'s settings for this checkout only (Claude Code\'s .claude/settings.local.json), usually not committed'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -l git -d 'Install git\'s commit-trailer hook instead'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l agent -d 'The agent host whose settings to change' -r -f -a "claude-code\t'Claude Code: .claude/settings.json (--local: .claude/settings.local.json)'
codex\t'Codex: .codex/hooks.json'
gemini\t'Gemini CLI: .gemini/settings.json'
copilot\t'Copilot CLI: .github/hooks/stella.json'
opencode\t'OpenCode: .opencode/plugins/stella.js'
qwen\t'Qwen Code: .qwen/settings.json'
cursor\t'Cursor: .cursor/hooks.json'"
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l user -d 'Change the settings in your home folder (every project) instead of the repository\'s'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l local -d 'Change the host\'s settings for this checkout only (Claude Code\'s .claude/settings.local.json), usually not committed'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l git -d 'Install git\'s commit-trailer hook instead'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "install" -d 'Install Stella\'s hooks into an agent\'s settings file, or git\'s prepare-commit-msg hook'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Take Stella\'s hooks out of an agent\'s settings file, or git\'s, again'
complete -c git-stella -n "__fish_git_stella_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand mcp" -s C -d 'Run as if started in DIR' -r -F
complete -c git-stella -n "__fish_git_stella_using_subcommand mcp" -l session -d 'The session to act on' -r
complete -c git-stella -n "__fish_git_stella_using_subcommand mcp" -l color -d 'Colour the output: always, never, or auto (a terminal); default from color.stella or color.ui' -r -f -a "always\t''
never\t''
auto\t''"
complete -c git-stella -n "__fish_git_stella_using_subcommand mcp" -s q -l quiet -d 'Say nothing on stderr but errors and refusals'
complete -c git-stella -n "__fish_git_stella_using_subcommand mcp" -s v -l verbose -d 'Say more on stderr (repeat for more)'
complete -c git-stella -n "__fish_git_stella_using_subcommand mcp" -l no-pager -d 'Do not pipe log, show, diff or recover into a pager'
complete -c git-stella -n "__fish_git_stella_using_subcommand mcp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "init" -d 'Create or confirm this workspace\'s id, .stella/private/ and the store'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "session" -d 'Start, list, show and drop sessions'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "read" -d 'Record that the session read these files'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "wrote" -d 'Record writes or deletes that already happened'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "guard" -d 'Check files before an update or delete; exit 1 when a write would clobber someone\'s work'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "write" -d 'Write stdin to a file, refused when the file changed since the session saw it'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "rm" -d 'Delete files, refused when any changed since the session saw it'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "status" -d 'Show every tracked file of the session: unchanged, changed or deleted since the session saw it'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "diff" -d 'Show what changed on disk since the session saw these files'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "exec" -d 'Run a command under the shell guard: its reads are recorded, its stale writes refused'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "turn" -d 'Open or end a turn (one prompt to the end of its answer)'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "step" -d 'Mark a step boundary inside the open turn, optionally storing the transcript'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "resume" -d 'Show where the session stands: its open turn, if any, and what to re-read'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "checkpoint" -d 'Pack the session into one self-contained file (a git bundle) a colleague can replay'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "inspect" -d 'Show an artifact\'s manifest, base commit, fingerprint and what it holds'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "verify" -d 'Check an artifact against this tree without consuming it'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "replay" -d 'Start a new session from an artifact, refused when it does not belong to this tree'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "log" -d 'Show a session\'s steps, newest first; without a session, every session\'s'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "show" -d 'Show one session\'s timeline, oldest step first, as text or as one HTML page'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "recover" -d 'List, show or restore any version of a file that a session read, wrote or saw overwritten'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "undo" -d 'Put back what was in each file before the session first wrote it'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "store-path" -d 'Print where this workspace\'s journal store is, for plain git'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "gc" -d 'Repack the store and prune what no session reaches'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "doctor" -d 'Check that Stella\'s protection is on: installed hooks, config, data dir, shell guard'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "demo" -d 'Run a short, real walkthrough in a temp folder: two sessions, a refused write, a checkpoint, a replay into a fresh clone'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "hook" -d 'Answer an agent host\'s hook call: read its payload on stdin, act, answer in its protocol'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "hooks" -d 'Wire Stella into an agent host\'s hooks or git\'s, or take it out again'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "mcp" -d 'Serve guarded file tools over MCP on stdin and stdout'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and not __fish_seen_subcommand_from init session read wrote guard write rm status diff exec turn step resume checkpoint inspect verify replay log show recover undo store-path gc doctor demo hook hooks mcp help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "start" -d 'Start a session and print its id'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "list" -d 'List the sessions of this workspace'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "show" -d 'Show one session: when it started, where it came from, its steps and how many files it tracks'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "end" -d 'End a session: its uncommitted writes stop being protected from other sessions'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "drop" -d 'Drop a session: it stops guarding anything, and its id is free again'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "undrop" -d 'Bring back a dropped session, exactly as it was when dropped'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "prune" -d 'Drop every session whose last step is older than a duration'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from turn" -f -a "begin" -d 'Open a turn: the journal gets a resume point'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from turn" -f -a "end" -d 'End the open turn: the resume point is retracted, the staleness map stays'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "claude-code" -d 'Answer one Claude Code hook payload (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd)'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "codex" -d 'Answer a Codex CLI hook (PreToolUse/PostToolUse on apply_patch and Bash)'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "gemini" -d 'Answer a Gemini CLI hook (BeforeTool/AfterTool on read_file, write_file, replace, run_shell_command)'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "copilot" -d 'Answer a GitHub Copilot CLI hook (preToolUse/postToolUse on view, create, edit, apply_patch, bash)'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "opencode" -d 'Answer Stella\'s OpenCode plugin (tool.execute.before/after on read, write, edit, apply_patch, bash)'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "qwen" -d 'Answer a Qwen Code hook (PreToolUse/PostToolUse on read_file, write_file, edit, run_shell_command)'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "cursor" -d 'Answer a Cursor hook (preToolUse, beforeReadFile, afterFileEdit)'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "install" -d 'Install Stella\'s hooks into an agent\'s settings file, or git\'s prepare-commit-msg hook'
complete -c git-stella -n "__fish_git_stella_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "uninstall" -d 'Take Stella\'s hooks out of an agent\'s settings file, or git\'s, again'
