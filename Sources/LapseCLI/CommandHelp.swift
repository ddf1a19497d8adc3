// SPDX-License-Identifier: GPL-3.0-or-later

/// A row of a help section: an option the command declares, or a text row (an input, the options of every command).
enum HelpRow: Sendable {
    case option(Option)
    case text(String, String)
}

/// A titled group of rows in a command's help ("Route:", "Output:").
struct HelpSection: Sendable {
    let title: String
    let rows: [HelpRow]

    init(_ title: String, _ options: [Option], more: [HelpRow] = []) {
        self.title = title
        self.rows = options.map(HelpRow.option) + more
    }

    init(_ title: String, rows: [HelpRow]) {
        self.title = title
        self.rows = rows
    }
}

/// A command's help: its usage line, what it does, its options in sections, notes and examples. The text is made
/// from the options' declarations (``Option``): names, value and text in two columns, the text wrapped.
struct CommandHelp: Sendable {
    /// The usage line (`lapse video [options] INPUT... -o OUTPUT`), printed with usage errors too.
    let usage: String
    /// What the command does: paragraphs as written (already wrapped).
    let about: String
    let sections: [HelpSection]
    /// Text after the options (already wrapped); nil for none.
    var notes: String?
    /// Command lines, one an example.
    let examples: [String]

    /// The help's width in columns.
    static let width = 116

    /// The options the command declares, in the order its help lists them.
    var options: [Option] {
        sections.flatMap(\.rows).compactMap { row in
            if case .option(let o) = row { return o }
            return nil
        }
    }

    var text: String {
        var lines = [usage, ""] + about.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.append("")
        let heads = sections.flatMap(\.rows).map(Self.head)
        // The text column: after the longest head that is not far longer than the rest (a longer one has its text
        // on the next line).
        let sorted = heads.map(\.count).sorted()
        let typical = sorted.isEmpty ? 20 : sorted[(sorted.count * 9) / 10]
        let column = min(32, max(22, typical + 3))
        for section in sections {
            lines.append(section.title + ":")
            for row in section.rows {
                let head = "  " + Self.head(row)
                let body: String
                switch row {
                case .option(let o):
                    let shown = o.aliases.filter { $0.hasPrefix("--") }
                    body = o.text + (shown.isEmpty ? "" : " (also " + shown.joined(separator: ", ") + ")")
                case .text(_, let t): body = t
                }
                let bodyLines = Self.wrap(body, width: Self.width - column)
                if head.count + 1 > column {
                    lines.append(head)
                    lines += bodyLines.map { String(repeating: " ", count: column) + $0 }
                } else {
                    lines.append(head.padding(toLength: column, withPad: " ", startingAt: 0) + (bodyLines.first ?? ""))
                    lines += bodyLines.dropFirst().map { String(repeating: " ", count: column) + $0 }
                }
            }
        }
        if let notes {
            lines.append("")
            lines += notes.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        if !examples.isEmpty {
            lines += ["", "Examples:"] + examples.map { "  " + $0 }
        }
        return lines.joined(separator: "\n")
    }

    /// The left column of a row: `-o, --output FILE`, `--crossfade`, `INPUT`.
    private static func head(_ row: HelpRow) -> String {
        switch row {
        case .option(let o): return o.names.joined(separator: ", ") + (o.value.map { " " + $0 } ?? "")
        case .text(let head, _): return head
        }
    }

    /// `text` in lines of at most `width` characters, broken at spaces; a text with line breaks is kept as its lines.
    static func wrap(_ text: String, width: Int) -> [String] {
        if text.contains("\n") { return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
