// SPDX-License-Identifier: GPL-3.0-or-later
import LapseKit

/// One `lapse` subcommand: its help, made from its options' declarations, and how it runs.
protocol Command: Sendable {
    /// The word after `lapse`.
    static var name: String { get }
    /// One line for `lapse --help`.
    static var summary: String { get }
    /// The command's help: usage line, description, the options it declares (``Option``), examples.
    static var page: CommandHelp { get }
    /// Runs the command: reads every option it declares from `arguments` (and only those) before it checks
    /// how they combine, then does the work. Options common to all commands (`--quiet`, `--json`) are already
    /// taken out. Throws ``LapseError`` (code `.usage` for usage errors).
    static func run(_ arguments: inout Arguments, console: Console) async throws
}

extension Command {
    /// The full `--help` text; its first line is the usage line.
    static var help: String { page.text }
    /// The usage line (printed with usage errors).
    static var usageLine: String { String(page.usage.prefix { $0 != "\n" }) }
    /// The options the command declares.
    static var options: [Option] { page.options }
}

/// Every subcommand, in the order `lapse --help` lists them.
let allCommands: [any Command.Type] = [
    HyperlapseCommand.self,
    PreviewCommand.self,
    RouteCommand.self,
    PanoramasCommand.self,
    ViewCommand.self,
    VideoCommand.self,
    ClipCommand.self,
    GIFCommand.self,
    ConcatCommand.self
]
