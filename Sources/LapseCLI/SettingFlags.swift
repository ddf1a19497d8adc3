// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The library names a setting in its messages as its API does, in backticks (`` `lookAt` ``, `` `overwrite` ``);
/// the command line shows the flag that sets it instead (`--look-at`, `--overwrite`). A name it has no flag for
/// is shown without the backticks.
enum SettingFlags {
    /// The setting's name in LapseKit's types (``HyperlapseSettings``, ``GIFJob``, ``PanoramaSourceOptions``,
    /// ``DirectionsConfiguration``, ``AtomicOutput``) → its flag: from the options' declarations (``Option/setting``).
    static let flags: [String: String] = {
        var flags: [String: String] = [:]
        for command in allCommands {
            for option in command.options {
                if let setting = option.setting { flags[setting] = option.name }
            }
        }
        return flags
    }()

    /// `message` with every `` `name` `` of a setting replaced by its flag.
    static func shown(_ message: String) -> String {
        guard message.contains("`") else { return message }
        var out = ""
        var name = ""
        var inName = false
        for c in message {
            if c == "`" {
                if inName { out += flags[name] ?? name }
                inName.toggle()
                name = ""
            } else if inName {
                name.append(c)
            } else {
                out.append(c)
            }
        }
        if inName { out += "`" + name } // an unpaired backtick stays as it was
        return out
    }
}
