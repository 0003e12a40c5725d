# Sourced by every non-interactive bash under run.sh (BASH_ENV): logs every
# command that is not found, i.e. anything but a stub or a builtin.
command_not_found_handle() {
    printf '%s\n' "$1" >> "$STUB_OUT/notfound"
    return 127
}
