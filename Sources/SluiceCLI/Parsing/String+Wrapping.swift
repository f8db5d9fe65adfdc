extension String {
    /// The text as lines of at most `columns` display columns, broken at spaces: the first line
    /// starts with `lead`, the others with `indent` spaces. Runs of spaces between words become
    /// one; a word longer than a whole line stands alone on its line, past the limit.
    func wrapped(toColumns columns: Int, after lead: String = "", indent: Int = 0) -> [String] {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = lead
        var lineHasWord = false
        for word in split(separator: " ") {
            let word = String(word)
            if lineHasWord && line.displayWidth + 1 + word.displayWidth > columns {
                lines.append(line)
                line = margin
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines
    }
}
