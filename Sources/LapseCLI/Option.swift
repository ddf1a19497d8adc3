// SPDX-License-Identifier: GPL-3.0-or-later

/// An option of a command, declared once: the parser reads the command line by this declaration (``Arguments``)
/// and the command's help lists it from it (``CommandHelp``), so the two cannot drift apart.
struct Option: Sendable, Hashable {
    /// The names shown in the help, short first (`-o`, `--output`).
    let names: [String]
    /// Further names the parser takes (an old name, another command's name for it); the help mentions them after
    /// the option's text ("also --out").
    let aliases: [String]
    /// What the value is called in the help (`FILE`, `LAT,LNG`, `auto|0-5`); nil for a flag, which takes none.
    let value: String?
    /// The help's text for it: one paragraph, wrapped to the help's width; or lines kept as they are when it holds
    /// line breaks (a table).
    let text: String
    /// The library's name of the setting it sets (``LapseKit/HyperlapseSettings``' `lookAt` for `--look-at`): an
    /// error message naming the setting names the flag instead (``SettingFlags``).
    let setting: String?

    init(
        _ names: String..., value: String? = nil, aliases: [String] = [], setting: String? = nil, help text: String
    ) {
        self.names = names
        self.aliases = aliases
        self.value = value
        self.text = text
        self.setting = setting
    }

    private init(names: [String], aliases: [String], value: String?, text: String, setting: String?) {
        (self.names, self.aliases, self.value, self.text, self.setting) = (names, aliases, value, text, setting)
    }

    /// Every name the parser takes for it.
    var allNames: [String] { names + aliases }

    /// The name messages use: the long one (`--output`), else the first.
    var name: String { names.first { $0.hasPrefix("--") } ?? names[0] }

    /// Whether it takes no value.
    var isFlag: Bool { value == nil }

    /// The same option, explained in this command's terms (`-o`'s text differs between a video and a folder).
    func described(_ text: String, value: String? = nil) -> Option {
        Option(names: names, aliases: aliases, value: value ?? self.value, text: text, setting: setting)
    }

    /// The same option under further names in this command (`lapse preview`'s `-o` is `--report` too).
    func also(_ more: String...) -> Option {
        Option(names: names, aliases: aliases + more, value: value, text: text, setting: setting)
    }

    /// The same option shown under other names (aliases first in the row), the old ones still taken.
    func shown(as shown: [String]) -> Option {
        Option(
            names: shown, aliases: (names + aliases).filter { !shown.contains($0) }, value: value, text: text,
            setting: setting)
    }

    /// The same option setting another of the library's settings (nil: none that messages name).
    func setting(_ setting: String?) -> Option {
        Option(names: names, aliases: aliases, value: value, text: text, setting: setting)
    }

    // One option is one set of names, whatever its text in each command.
    static func == (a: Option, b: Option) -> Bool { Set(a.allNames) == Set(b.allNames) }
    func hash(into hasher: inout Hasher) { hasher.combine(Set(allNames)) }
}

/// The options every command takes, parsed before the command's own (``runMain(_:)``).
enum GlobalOptions {
    static let quiet = Option("--quiet", aliases: ["-q"], help: "no progress, no summary (errors only)")
    static let json = Option("--json", help: "a machine-readable summary on stdout")
    static let help = Option("--help", aliases: ["-h"], help: "the command's help")
    static let version = Option("--version", help: "lapse's version")
    static let all = [quiet, json, help, version]

    /// The row each command's help ends its options with.
    static func row(progress: Bool) -> HelpRow {
        .text(
            "--quiet, --json",
            progress ? "no progress / a JSON summary on stdout" : "no summary / a JSON summary on stdout")
    }
}
