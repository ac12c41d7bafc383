/** One label of a label set (Gitea's options/label files): its colour without `#`. */
export interface LabelTemplateEntry {
  name: string
  color: string
  description: string
  exclusive: boolean
}

const simple = (color: string, name: string, description: string): LabelTemplateEntry => ({ name, color, description, exclusive: false })
const scoped = (color: string, name: string, description: string, exclusive = true): LabelTemplateEntry => ({ name, color, description, exclusive })

/** Label sets by name, Gitea's: `Default` (plain labels) and `Advanced` (scoped, mostly exclusive). */
export const LABEL_SETS: Record<string, LabelTemplateEntry[]> = {
  Advanced: [
    scoped('ee0701', 'Kind/Bug', 'Something is not working', false),
    scoped('0288d1', 'Kind/Feature', 'New functionality', false),
    scoped('84b6eb', 'Kind/Enhancement', 'Improve existing functionality', false),
    scoped('9c27b0', 'Kind/Security', 'This is security issue', false),
    scoped('795548', 'Kind/Testing', 'Issue or pull request related to testing', false),
    scoped('c62828', 'Kind/Breaking', "Breaking change that won't be backward compatible", false),
    scoped('37474f', 'Kind/Documentation', 'Documentation changes', false),
    scoped('616161', 'Reviewed/Duplicate', 'This issue or pull request already exists'),
    scoped('546e7a', 'Reviewed/Invalid', 'Invalid issue'),
    scoped('795548', 'Reviewed/Confirmed', 'Issue has been confirmed'),
    scoped('eeeeee', "Reviewed/Won't Fix", "This issue won't be fixed"),
    scoped('424242', 'Status/Need More Info', 'Feedback is required to reproduce issue or to continue work'),
    scoped('880e4f', 'Status/Blocked', 'Something is blocking this issue or pull request'),
    scoped('222222', 'Status/Abandoned', 'Somebody has started to work on this but abandoned work'),
    scoped('b71c1c', 'Priority/Critical', 'The priority is critical'),
    scoped('d32f2f', 'Priority/High', 'The priority is high'),
    scoped('e64a19', 'Priority/Medium', 'The priority is medium'),
    scoped('4caf50', 'Priority/Low', 'The priority is low'),
  ],
  Default: [
    simple('ee0701', 'bug', 'Something is not working'),
    simple('cccccc', 'duplicate', 'This issue or pull request already exists'),
    simple('84b6eb', 'enhancement', 'New feature'),
    simple('128a0c', 'help wanted', 'Need some help'),
    simple('e6e6e6', 'invalid', 'Something is wrong'),
    simple('cc317c', 'question', 'More information is needed'),
    simple('ffffff', 'wontfix', "This won't be fixed"),
  ],
}
