/**
 * Templates for a repository's first commit (auto_init): .gitignore files, licenses and the
 * README; and the label sets. Served as they are by `modules/misc` (`/gitignore/templates`,
 * `/licenses`, `/label/templates`), the licenses also matched by `modules/licenses`. Imported as
 * text so that a compiled single binary carries them too.
 */
import gitignore_C from './gitignore/C.txt' with { type: 'text' }
import gitignore_CPP from './gitignore/C++.txt' with { type: 'text' }
import gitignore_Go from './gitignore/Go.txt' with { type: 'text' }
import gitignore_Java from './gitignore/Java.txt' with { type: 'text' }
import gitignore_JetBrains from './gitignore/JetBrains.txt' with { type: 'text' }
import gitignore_Kotlin from './gitignore/Kotlin.txt' with { type: 'text' }
import gitignore_Linux from './gitignore/Linux.txt' with { type: 'text' }
import gitignore_macOS from './gitignore/macOS.txt' with { type: 'text' }
import gitignore_Node from './gitignore/Node.txt' with { type: 'text' }
import gitignore_Python from './gitignore/Python.txt' with { type: 'text' }
import gitignore_Ruby from './gitignore/Ruby.txt' with { type: 'text' }
import gitignore_Rust from './gitignore/Rust.txt' with { type: 'text' }
import gitignore_Swift from './gitignore/Swift.txt' with { type: 'text' }
import gitignore_VisualStudio from './gitignore/VisualStudio.txt' with { type: 'text' }
import gitignore_VisualStudioCode from './gitignore/VisualStudioCode.txt' with { type: 'text' }
import gitignore_Windows from './gitignore/Windows.txt' with { type: 'text' }
import license_AGPL_3_0 from './license/AGPL-3.0.txt' with { type: 'text' }
import license_Apache_2_0 from './license/Apache-2.0.txt' with { type: 'text' }
import license_BSD_2_Clause from './license/BSD-2-Clause.txt' with { type: 'text' }
import license_BSD_3_Clause from './license/BSD-3-Clause.txt' with { type: 'text' }
import license_GPL_2_0 from './license/GPL-2.0.txt' with { type: 'text' }
import license_GPL_3_0 from './license/GPL-3.0.txt' with { type: 'text' }
import license_ISC from './license/ISC.txt' with { type: 'text' }
import license_LGPL_3_0 from './license/LGPL-3.0.txt' with { type: 'text' }
import license_MIT from './license/MIT.txt' with { type: 'text' }
import license_MPL_2_0 from './license/MPL-2.0.txt' with { type: 'text' }
import license_Unlicense from './license/Unlicense.txt' with { type: 'text' }
import readmeDefault from './readme/Default.txt' with { type: 'text' }
import { LABEL_SETS, type LabelTemplateEntry } from './labels'

/** .gitignore templates by name (Gitea's names, from github/gitignore). */
export const GITIGNORE_TEMPLATES: Record<string, string> = {
  'C': gitignore_C,
  'C++': gitignore_CPP,
  'Go': gitignore_Go,
  'Java': gitignore_Java,
  'JetBrains': gitignore_JetBrains,
  'Kotlin': gitignore_Kotlin,
  'Linux': gitignore_Linux,
  'macOS': gitignore_macOS,
  'Node': gitignore_Node,
  'Python': gitignore_Python,
  'Ruby': gitignore_Ruby,
  'Rust': gitignore_Rust,
  'Swift': gitignore_Swift,
  'VisualStudio': gitignore_VisualStudio,
  'VisualStudioCode': gitignore_VisualStudioCode,
  'Windows': gitignore_Windows,
  /** Gitea's name for .NET projects is VisualStudio; Dotnet is accepted as its alias. */
  'Dotnet': gitignore_VisualStudio,
}

/** License texts by SPDX identifier. */
export const LICENSE_TEMPLATES: Record<string, string> = {
  'AGPL-3.0': license_AGPL_3_0,
  'Apache-2.0': license_Apache_2_0,
  'BSD-2-Clause': license_BSD_2_Clause,
  'BSD-3-Clause': license_BSD_3_Clause,
  'GPL-2.0': license_GPL_2_0,
  'GPL-3.0': license_GPL_3_0,
  'ISC': license_ISC,
  'LGPL-3.0': license_LGPL_3_0,
  'MIT': license_MIT,
  'MPL-2.0': license_MPL_2_0,
  'Unlicense': license_Unlicense,
}

/** README templates; `{Name}` and `{Description}` are filled in. */
export const README_TEMPLATES: Record<string, string> = { Default: readmeDefault }

/** Label sets by name (Gitea's label templates). */
export const LABEL_TEMPLATES: Record<string, LabelTemplateEntry[]> = LABEL_SETS
export type { LabelTemplateEntry }
