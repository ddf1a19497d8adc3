// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

/// A command line being taken apart: options are removed as a command asks for them, by their declarations
/// (``Option``), and whatever is left at the end is an unknown option (a usage error). Accepts `--name value`,
/// `--name=value` and `-o value`.
struct Arguments {
    private var tokens: [String]
    /// The names of every option asked for so far, whether given or not: what the command's parser takes (a test
    /// holds it to the options its help lists).
    private(set) var asked: Set<String> = []

    init(_ tokens: [String]) { self.tokens = tokens }

    var isEmpty: Bool { tokens.isEmpty }

    /// Removes a flag; true when it was present (any number of times, under any of its names) before `--`.
    mutating func flag(_ option: Option) -> Bool {
        asked.formUnion(option.allNames)
        let names = option.allNames
        let end = tokens.firstIndex(of: "--") ?? tokens.endIndex
        let before = tokens[..<end].filter { !names.contains($0) }
        let found = before.count < end
        tokens = Array(before) + tokens[end...]
        return found
    }

    /// Removes every occurrence of an option with a value (under any of its names) and returns the values in
    /// the order given. A value after a space never looks like an option (`-o --fast` is an error: `-o` has no
    /// value); one that does is given with `=` (`--title=--x`). Negative numbers (`-30`, `-33.8,151.2`) are values.
    mutating func values(_ option: Option) throws -> [String] {
        asked.formUnion(option.allNames)
        return try values(option.allNames)
    }

    private mutating func values(_ names: [String]) throws -> [String] {
        var result: [String] = []
        var i = 0
        while i < tokens.count {
            let t = tokens[i]
            if t == "--" { break }
            if names.contains(t) {
                guard i + 1 < tokens.count, !Self.looksLikeOption(tokens[i + 1]) else {
                    throw LapseError.usage(
                        "\(t) needs a value"
                            + (i + 1 < tokens.count
                                ? " (\(tokens[i + 1]) is an option; give a value that starts with - as \(t)=VALUE)"
                                : ""))
                }
                result.append(Self.home(tokens[i + 1]))
                tokens.removeSubrange(i...i + 1)
                continue
            }
            if let eq = t.firstIndex(of: "="), names.contains(String(t[..<eq])) {
                result.append(Self.home(String(t[t.index(after: eq)...])))
                tokens.remove(at: i)
                continue
            }
            i += 1
        }
        return result
    }

    /// Removes an option that may be given once; the last one given wins when repeated, whichever of its names
    /// (`-o a.gif --output b.gif` writes b.gif).
    mutating func value(_ option: Option) throws -> String? { try values(option).last }

    /// `~` and `~/…` with `$HOME` in their place, as a shell would (which it does not when the word was quoted, or
    /// after `=` in `--output=~/x.mp4`); other values as given.
    static func home(_ value: String) -> String {
        guard value == "~" || value.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"],
            !home.isEmpty
        else { return value }
        return home + value.dropFirst()
    }

    /// `--name`, `-x` (a letter after the dash); not `-`, `-30` or `-.5`.
    static func looksLikeOption(_ token: String) -> Bool {
        guard token.hasPrefix("-"), token.count >= 2 else { return false }
        let second = token[token.index(after: token.startIndex)]
        return second == "-" || second.isLetter
    }

    /// An option parsed as a number within `range`.
    mutating func double(_ option: Option, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = try value(option) else { return nil }
        let name = option.name
        guard let v = NumberText.decimal(text), range.contains(v) else {
            throw LapseError.usage(
                """
                \(name) takes a number from \(NumberText.compact(range.lowerBound)) to \
                \(NumberText.compact(range.upperBound)), not '\(text)'
                """
            )
        }
        return v
    }

    /// An option parsed as a frame rate (25, 29.97, 30000/1001; ``FrameRate/parse(_:)``) within `range` fps.
    mutating func frameRate(_ option: Option, in range: ClosedRange<Double>) throws -> FrameRate? {
        guard let text = try value(option) else { return nil }
        let name = option.name
        guard let rate = FrameRate.parse(text), range.contains(rate.value) else {
            throw LapseError.usage(
                """
                \(name) takes frames per second from \(NumberText.compact(range.lowerBound)) to \
                \(NumberText.compact(range.upperBound)) (25, 29.97, 30000/1001), not '\(text)'
                """
            )
        }
        return rate
    }

    /// An option parsed as a whole number within `range`.
    mutating func int(_ option: Option, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try value(option) else { return nil }
        let name = option.name
        guard let v = Int(text), range.contains(v) else {
            throw LapseError.usage(
                "\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return v
    }

    /// An option whose value is one of `choices`.
    mutating func choice(_ option: Option, _ choices: [String]) throws -> String? {
        guard let text = try value(option) else { return nil }
        let name = option.name
        guard choices.contains(text) else {
            throw LapseError.usage("\(name) takes one of \(choices.joined(separator: ", ")), not '\(text)'")
        }
        return text
    }

    /// An option holding a time: seconds (`12.5`) or `[HH:]MM:SS[.mmm]`.
    mutating func time(_ option: Option) throws -> Double? {
        guard let text = try value(option) else { return nil }
        let name = option.name
        guard let t = TimeValue.parse(text) else {
            throw LapseError.usage("\(name) takes seconds (12.5) or [HH:]MM:SS[.mmm], not '\(text)'")
        }
        return t
    }

    /// An option holding `WxH` (each 1…16384, ``FrameSize/init(parsing:)``).
    mutating func size(_ option: Option) throws -> FrameSize? {
        guard let text = try value(option) else { return nil }
        let name = option.name
        guard let size = FrameSize(parsing: text) else {
            throw LapseError.usage("\(name) takes WIDTHxHEIGHT such as 1280x720, 1 to 16384 each, not '\(text)'")
        }
        return size
    }

    /// Everything left that is not an option; an unknown option left over is a usage error.
    mutating func positionals() throws -> [String] {
        var result: [String] = []
        var afterDashes = false
        for t in tokens {
            if afterDashes {
                result.append(Self.home(t))
                continue
            }
            if t == "--" {
                afterDashes = true
                continue
            }
            if t.hasPrefix("-") && t.count > 1 && NumberText.decimal(t) == nil {
                throw LapseError.usage("unknown option \(t)")
            }
            result.append(Self.home(t))
        }
        tokens = []
        return result
    }
}
