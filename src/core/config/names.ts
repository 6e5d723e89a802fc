/**
 * The grammar of the names a config gives its images and environments. They appear in branch
 * names, PR titles, labels, commands and the hidden blocks Ferry reads back, so every one of those
 * checks against this one definition.
 */
export const NAME_SOURCE = "[a-z0-9][a-z0-9_-]{0,62}";
export const NAME_PATTERN = new RegExp(`^${NAME_SOURCE}$`);
