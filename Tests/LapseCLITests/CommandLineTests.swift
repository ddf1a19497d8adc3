// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import Testing

@testable import LapseCLI

/// The command line in-process: each command's help against the options its parser reads, and flags parsed into
/// the library's settings.
@Suite struct CommandLineTests {
    /// Every `--name` a text mentions.
    static func mentioned(_ text: String) -> Set<String> {
        Set(text.matches(of: /(?:^|[\s,\[(|'])(--[a-z][a-z0-9-]*)/).map { String($0.1) })
    }

    /// Runs `command` on `words` in-process, quietly; the usage error it ends with, if any.
    static func run(_ command: any Command.Type, _ words: [String]) async -> (Arguments, LapseError?) {
        var arguments = Arguments(words)
        do {
            try await command.run(&arguments, console: Console(quiet: true, json: false))
            return (arguments, nil)
        } catch let error as LapseError {
            return (arguments, error)
        } catch {
            Issue.record("\(command.name): \(error)")
            return (arguments, nil)
        }
    }

    /// The parser of each command, run on an empty command line (a usage error, nothing done), reads exactly the
    /// options its help lists: none missing from the help, none listed that it does not take.
    static let names: [String] = allCommands.map { command in command.name }

    @Test(arguments: names)
    func everyHelpListsExactlyWhatItsParserReads(_ name: String) async throws {
        let command = try #require(allCommands.first { $0.name == name })
        let (arguments, error) = await Self.run(command, [])
        #expect(error?.code == .usage, "\(name) with no arguments: \(String(describing: error))")
        let declared = Set(command.options.flatMap(\.allNames))
        let unlisted = arguments.asked.subtracting(declared).sorted()
        let unread = declared.subtracting(arguments.asked)
        #expect(unlisted.isEmpty, "\(name) reads \(unlisted), which its help does not list")
        #expect(unread.isEmpty, "\(name)'s help lists \(unread.sorted()), which it does not read")
        // Each declared once.
        #expect(command.options.count == Set(command.options).count, "\(name) lists an option twice")
        // Whatever the help's text mentions is an option of this command or of every command; one mentioned in
        // another command's line ('lapse concat … --gif OUT.gif') is that command's.
        let global = Set(GlobalOptions.all.flatMap(\.allNames))
        var text = command.help
        for quoted in command.help.matches(of: /'lapse ([a-z]+)([^']*)'/) {
            let other = try #require(allCommands.first { $0.name == String(quoted.1) }, "\(quoted.0)")
            let unknown = Self.mentioned(String(quoted.2)).subtracting(other.options.flatMap(\.allNames))
            #expect(
                unknown.isEmpty,
                "\(name)'s help: \(quoted.0) names \(unknown.sorted()), which \(other.name) does not take")
            text = text.replacingOccurrences(of: String(quoted.0), with: "")
        }
        let unknown = Self.mentioned(text).subtracting(declared).subtracting(global)
        #expect(unknown.isEmpty, "\(name)'s help mentions \(unknown.sorted()), which it does not take")
        // Every option's names appear in the help (an alias in its row's "also").
        for option in command.options {
            for n in option.allNames where n.hasPrefix("--") {
                #expect(Self.mentioned(command.help).contains(n), "\(name)'s help does not show \(n)")
            }
        }
    }

    /// A help's first line is its usage line; its rows put each option's names and value in the left column and
    /// its text to the right, wrapped within the help's width.
    @Test func helpIsMadeFromTheDeclarations() throws {
        let help = VideoCommand.help
        #expect(help.hasPrefix("lapse video [options] INPUT... -o OUTPUT\n"))
        #expect(VideoCommand.usageLine == "lapse video [options] INPUT... -o OUTPUT")
        let row = try #require(help.split(separator: "\n").first { $0.hasPrefix("  --crf N") })
        #expect(row.hasSuffix("quality 0–51, lower is better (default 20)"))
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        // The option rows are within the width (the examples and the about text are as written).
        let rows = lines.filter { $0.hasPrefix("  -") || $0.hasPrefix("      ") }
        #expect(
            !rows.isEmpty && rows.allSatisfy { $0.count <= CommandHelp.width },
            "\(rows.filter { $0.count > CommandHelp.width })")
        // A two-line usage: the first line is the one usage errors print.
        #expect(ClipCommand.usageLine.hasPrefix("lapse clip INPUT -o OUTPUT") && !ClipCommand.usageLine.contains("\n"))
        #expect(ClipCommand.help.contains("\n           [--no-audio | --audio FILE"))
        // An alias is named in its row.
        #expect(PanoramasCommand.help.contains("(also --out)"))
        #expect(RouteCommand.help.contains("(also --route)"))
    }

    /// Each setting of the library is set by one flag, whichever command declares it; the messages that name a
    /// setting in backticks show that flag.
    @Test func settingsAndFlagsAreOneToOne() {
        var flagOf: [String: Set<String>] = [:]
        for command in allCommands {
            for option in command.options {
                if let s = option.setting { flagOf[s, default: []].insert(option.name) }
            }
        }
        let ambiguous = flagOf.filter { $0.value.count > 1 }
        #expect(ambiguous.isEmpty, "\(ambiguous)")
        #expect(SettingFlags.flags["lookAt"] == "--look-at")
        #expect(SettingFlags.flags["osrmBaseURL"] == "--osrm-url" && SettingFlags.flags["osrmURL"] == "--osrm-url")
        #expect(SettingFlags.flags["frameStep"] == "--frame-step" && SettingFlags.flags["crf"] == "--crf")
        #expect(SettingFlags.shown("use `overwrite` or `gifWidth`") == "use --overwrite or --gif-width")
        #expect(SettingFlags.shown("`noSuchSetting` stays") == "noSuchSetting stays")
    }

    /// Flags become the library's typed settings: the source parsed once, numbers within their ranges, flags that
    /// are given and left nil when not (a job file's value then stands).
    @Test func hyperlapseFlagsBecomeSettings() throws {
        var arguments = Arguments([
            "--route", "walk.gpx", "--source", "local:~/pics", "--spacing", "2.5", "--radius", "20",
            "--frame-step=3", "--timeout", "7", "--include-indoor", "--via", "1,2", "--via", "3,4"
        ])
        var settings = HyperlapseSettings()
        try HyperlapseCommand.parseRouteAndSource(&arguments, into: &settings)
        let rest = try arguments.positionals()
        #expect(rest.isEmpty)
        #expect(settings.route?.shown == "walk.gpx")
        #expect(settings.source?.ownPictures?.shown == NSHomeDirectory() + "/pics") // ~ expanded
        #expect(settings.spacing == 2.5 && settings.radius == 20 && settings.frameStep == 3 && settings.timeout == 7)
        #expect(settings.includeIndoor == true && settings.sharedCache == nil && settings.equirectangular == nil)
        #expect(settings.via == ["1,2", "3,4"])
        #expect(settings.from == nil && settings.to == nil && settings.provider == nil)
    }

    /// Usage errors name the option and its range, in-process, before anything runs.
    @Test func valuesOutOfRangeAreUsageErrors() async throws {
        let cases: [(any Command.Type, [String], String)] = [
            (VideoCommand.self, ["a.png", "-o", "a.mp4", "--crf", "60"], "--crf takes a number from 0 to 51, not '60'"),
            (
                HyperlapseCommand.self, ["--source", "google", "--fov", "180"],
                "--fov takes a number from 1 to 179, not '180'"
            ),
            (HyperlapseCommand.self, ["--source", "nowhere"], "--source takes google, panoramax, mapillary"),
            (
                ClipCommand.self, ["in.mp4", "-o", "x.mp4", "--start", "soon"],
                "--start takes seconds (12.5) or [HH:]MM:SS[.mmm], not 'soon'"
            ),
            (GIFCommand.self, ["in.mp4", "-o", "x.gif", "--palette", "some"], "--palette takes one of"),
            (ViewCommand.self, ["p.jpg", "-o", "v.png", "--size", "0x5"], "--size takes WIDTHxHEIGHT"),
            (RouteCommand.self, ["--input", "r.gpx", "-o", "r.gpx", "--widht", "3"], "unknown option --widht"),
            (PanoramasCommand.self, ["--source", "panoramax", "-o"], "-o needs a value")
        ]
        for (command, words, expected) in cases {
            let (_, error) = await Self.run(command, words)
            let e = try #require(error, "\(command.name) \(words)")
            #expect(e.code == .usage, "\(command.name) \(words): \(e.reason)")
            // As the console shows it: a setting named in backticks is shown as its flag.
            #expect(SettingFlags.shown(e.reason).contains(expected), "\(command.name) \(words): \(e.reason)")
        }
    }

    /// The last of an option's names given wins; `--name=value` and `-o value` both work; a negative number is a
    /// value; `--` ends the options; a value that looks like an option must be given with `=`.
    @Test func argumentsTakeValuesAsDocumented() throws {
        var a = Arguments(["-o", "a.gif", "--output=b.gif", "--heading", "-30", "--", "-y"])
        let output = try a.value(OutputOptions.output)
        let heading = try a.double(ViewCommand.heading, in: -1e6...1e6)
        let overwrite = a.flag(OutputOptions.overwrite)
        let rest = try a.positionals()
        #expect(output == "b.gif" && heading == -30 && !overwrite && rest == ["-y"])
        var b = Arguments(["-o", "--fast"])
        var refused = false
        do { _ = try b.value(OutputOptions.output) } catch { refused = true }
        #expect(refused)
        var c = Arguments(["--out", "dir", "-q"])
        let folder = try c.value(PanoramasCommand.output)
        let quiet = c.flag(GlobalOptions.quiet)
        #expect(folder == "dir" && quiet)
        #expect(c.asked.isSuperset(of: ["-o", "--output", "--out", "--quiet", "-q"]))
        // Every name a command took before the declarations still works: route's `-i` and `--route` for `--input`.
        for name in ["-i", "--input", "--route"] {
            var d = Arguments([name, "ride.gpx"])
            let input = try d.value(RouteCommand.input)
            #expect(input == "ride.gpx", "\(name)")
        }
    }

    /// The whole command line in-process: exit statuses as the executable returns them.
    @Test func runMainReturnsTheExitStatuses() async {
        #expect(await runMain(["--version", "--quiet"]) == 0)
        #expect(await runMain(["hyperlaps"]) == 64)
        #expect(await runMain(["video", "--quiet"]) == 64)
        #expect(await runMain(["video", "--help"]) == 0)
        #expect(await runMain(["view", "/nonexistent/pano.jpg", "-o", "/tmp/never.png", "--quiet"]) == 1)
    }
}
